#pragma once
// The two kinds of MLP activation, one the base of each activation (block/activations/):
// - ungated (GeLU, ReLU^2): z = act(u) on FF1's F outputs, F = 4H by default;
// - gated (SwiGLU, GeGLU): z = act(gate x) * (up x), FF1 giving the gate and up projections
//   together (2F outputs), F by default Llama's int(2 x 4H / 3) (the parameters of GeLU's 4H in
//   two matrices spread over three) rounded up to a multiple of 256.
#include <cstddef>

namespace meshslice {

struct UngatedActivation {
  static constexpr bool gated = false;
  static std::size_t default_ffn(std::size_t hidden) { return 4 * hidden; }
};

struct GatedActivation {
  static constexpr bool gated = true;
  static std::size_t default_ffn(std::size_t hidden) {
    const std::size_t multiple = 256, two_thirds = 8 * hidden / 3;
    return (two_thirds + multiple - 1) / multiple * multiple;
  }
};

}  // namespace meshslice
