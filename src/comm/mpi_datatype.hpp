#pragma once
#include <mpi.h>

#include <type_traits>

namespace meshslice {

struct bfloat16;  // core/bfloat16.hpp

// MPI has no bf16: a bf16 shard moves as its 16-bit patterns, which only gathers, broadcasts and
// point-to-point messages may do (a reduction of them would add integers).
template <class T>
MPI_Datatype mpi_datatype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, bfloat16>,
                "collectives support float, double and (moved, never reduced) bf16 shards");
  if constexpr (std::is_same_v<T, bfloat16>)
    return MPI_UINT16_T;
  else
    return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

}  // namespace meshslice
