#pragma once
// GeGLU (Shazeer 2020; T5 v1.1's and Gemma's MLP): ff2(gelu(gate x) * (up x)), GeLU in tanh
// form as GeluActivation's, F by default as SwiGLU's. One MLP activation
// (block/mlp_activations.hpp lists them).
#include "block/activations/activation_kinds.hpp"
#include "block/activations/gelu.hpp"

namespace meshslice {

struct GegluActivation : GatedActivation {
  static constexpr const char* name = "geglu";
  static constexpr const char* meaning = "Gemma's: ff2(gelu(gate x) * up x)";

  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T g) {
    return GeluActivation::value(g);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T g) {
    return GeluActivation::derivative(g);
  }
};

}  // namespace meshslice
