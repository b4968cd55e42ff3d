#pragma once
// Deterministic global operands for benchmarks and verification: entry (i, j) of global matrix
// `salt` is a hash of (salt, i, j) mapped to [-1, 1). Any rank can build any part of any
// operand on the device without communication, so every distributed result can be checked
// against a serial GEMM of the very same global data.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/kokkos_types.hpp"
#include "gemm/algorithm.hpp"

namespace meshslice {

KOKKOS_INLINE_FUNCTION double operand_entry(std::uint64_t salt, std::uint64_t i, std::uint64_t j) {
  std::uint64_t h =
      salt * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + j * 0x94D049BB133111EBull;
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // 53 bits -> [-1, 1)
}

// m(r, c) = global(salt)(region.row0 + r, region.col0 + c); with `transposed`, the region is of
// the transpose: m(r, c) = global(salt)(region.col0 + c, region.row0 + r).
template <class T>
void fill_operand(const Matrix<T>& m, std::uint64_t salt, const ShardRegion& region,
                  bool transposed = false) {
  const std::size_t cols = m.extent(1);
  const std::size_t row0 = region.row0, col0 = region.col0;
  Kokkos::parallel_for(
      "meshslice::fill_operand", Kokkos::RangePolicy<ExecSpace>(0, elements(m)),
      KOKKOS_LAMBDA(const std::size_t index) {
        const std::size_t r = index / cols, c = index % cols;
        m(r, c) = static_cast<T>(transposed ? operand_entry(salt, col0 + c, row0 + r)
                                            : operand_entry(salt, row0 + r, col0 + c));
      });
}

}  // namespace meshslice
