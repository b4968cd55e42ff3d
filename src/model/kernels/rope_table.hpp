#pragma once
// RoPE's turns, computed once per run for both attention kernels (model/kernels/attention.hpp,
// model/kernels/fused_attention.hpp).
#include <cmath>
#include <cstddef>

#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "block/block_work.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_config.hpp"

namespace meshslice {

template <class T>
using Packed = Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>;  // [pair][row][col]

namespace attention_kernels {

// RoPE's turns, computed once: table(0, i, d) and table(1, i, d) are the cosine and sine of
// the angle i * kRopeBase^(-2d/dim) of position i and dimension d < dim/2, computed in double
// (float and double runs turn by the same angles) and stored in T. A turn's sine and cosine
// cost more than everything else RoPE does, and the same len x dim/2 angles serve every pair
// and every pass.
template <class T>
void fill_rope_table(const ExecSpace& space, const AttentionShape& s, const Packed<T>& table) {
  const double log_base = std::log(kRopeBase), dim = static_cast<double>(s.dim);
  for_each_element(
      "attention_rope_table", space, s.len, s.dim / 2, KOKKOS_LAMBDA(std::size_t i, std::size_t d) {
        const double angle =
            static_cast<double>(i) * kmath::exp(-2.0 * static_cast<double>(d) / dim * log_base);
        table(0, i, d) = static_cast<T>(kmath::cos(angle));
        table(1, i, d) = static_cast<T>(kmath::sin(angle));
      });
}

// Dimensions d and d + dim/2 (x1, x2) of position i turned by their angle, or back with
// `inverse` (a gradient's turn): one formula for every kernel that turns.
template <class T>
struct TurnedPair {
  T first, second;
};
template <class T>
KOKKOS_INLINE_FUNCTION TurnedPair<T> rope_turn(const Packed<T>& table, std::size_t i, std::size_t d,
                                               T x1, T x2, bool inverse) {
  const T c = table(0, i, d), sn = inverse ? -table(1, i, d) : table(1, i, d);
  return {x1 * c - x2 * sn, x2 * c + x1 * sn};
}

}  // namespace attention_kernels

}  // namespace meshslice
