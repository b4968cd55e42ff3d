#pragma once
// Counter-based random numbers: a value is a pure function of (seed, stream, row, col), so a
// chip initialises exactly its own shard, in any order, on any backend, and the global tensor
// does not depend on the mesh. SplitMix64 finaliser for hashing, Box-Muller for normals.
#include <cstdint>

#include "core/kokkos_compat.hpp"

namespace meshslice {

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1), never 0 (safe for log).
KOKKOS_INLINE_FUNCTION double counter_uniform(std::uint64_t hash) {
  return (static_cast<double>(hash >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// A standard normal value for element (row, col) of tensor `stream` under `seed`.
KOKKOS_INLINE_FUNCTION double counter_normal(std::uint64_t seed, std::uint64_t stream,
                                             std::uint64_t row, std::uint64_t col) {
  const std::uint64_t h = mix64(seed ^ mix64(stream ^ mix64(row ^ mix64(col))));
  const double u1 = counter_uniform(h);
  const double u2 = counter_uniform(mix64(h));
  return kmath::sqrt(-2.0 * kmath::log(u1)) * kmath::cos(6.283185307179586 * u2);
}

}  // namespace meshslice
