#pragma once
// The scalar formulas of the model, shared by the serial reference and the
// distributed kernels so that both compute the same thing element by element (what the
// distributed model adds — layouts, collectives, the GEMM library — is what the tests check).
// The MLP's activations have theirs in block/activations/.
#include <cmath>
#include <cstddef>

#include "core/fast_exp.hpp"
#include "core/kokkos_compat.hpp"
#include "model/counter_random.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// Initial value of logical element (row, col) of a parameter; gains start at 1.
KOKKOS_INLINE_FUNCTION double init_value(std::uint64_t seed, std::uint64_t stream, double std_dev,
                                         std::size_t row, std::size_t col) {
  if (std_dev == 0) return 1.0;  // a gain (block_layers.hpp's parameter_std)
  return std_dev * counter_normal(seed, stream, row, col);
}

}  // namespace meshslice
