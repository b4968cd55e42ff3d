#pragma once
// The default width F of a gated MLP (z = act(gate x) * (up x)): Llama's int(2 x 4H / 3), the
// parameters of GeLU's 4H in two matrices spread over three, rounded up to a multiple of 256.
#include <cstddef>

namespace meshslice {

inline std::size_t gated_default_ffn(std::size_t hidden) {
  const std::size_t multiple = 256, two_thirds = 8 * hidden / 3;
  return (two_thirds + multiple - 1) / multiple * multiple;
}

}  // namespace meshslice
