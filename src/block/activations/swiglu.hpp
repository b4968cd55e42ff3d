#pragma once
// SwiGLU (Shazeer 2020), Llama's MLP: ff2(silu(gate x) * (up x)), the gate and up projections
// one FF1 of 2F outputs, F = 8H/3 rounded up to a multiple of 256. One MLP activation
// (block/mlp_activations.hpp lists them).
#include <Kokkos_Macros.hpp>

#include "block/activations/activation_kinds.hpp"
#include "core/fast_exp.hpp"

namespace meshslice {

struct SwigluActivation : GatedActivation {
  static constexpr const char* name = "swiglu";
  static constexpr const char* meaning = "Llama's: ff2(silu(gate x) * up x)";

  // SiLU (swish): g sigmoid(g), with the exp GeLU uses; its derivative s + g s (1 - s).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T g) {
    return g * sigmoid(g);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T g) {
    const T s = sigmoid(g);
    return s + g * s * (T(1) - s);
  }

 private:
  template <class T>
  KOKKOS_INLINE_FUNCTION static T sigmoid(T x) {
    return T(1) / (T(1) + kmath::fast_exp(-x));
  }
};

}  // namespace meshslice
