#pragma once
// Squared ReLU (So et al. 2021, Primer; Nemotron-4's MLP): ff2(relu(ff1 x)^2), F = 4H. One MLP
// activation (block/mlp_activations.hpp lists them).
#include <Kokkos_Macros.hpp>

#include "block/activations/activation_kinds.hpp"

namespace meshslice {

struct Relu2Activation : UngatedActivation {
  static constexpr const char* name = "relu2";
  static constexpr const char* meaning = "Nemotron-4's: ff2(relu(ff1 x)^2)";

  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x) {
    const T r = x > T(0) ? x : T(0);
    return r * r;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x) {
    return x > T(0) ? T(2) * x : T(0);
  }
};

}  // namespace meshslice
