#pragma once
#include <mpi.h>

#include <type_traits>

namespace meshslice {

template <class T>
MPI_Datatype mpi_datatype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "collectives support float and double shards");
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

}  // namespace meshslice
