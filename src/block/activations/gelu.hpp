#pragma once
// GeLU, GPT's MLP: ff2(gelu(ff1 x)), F = 4H. One MLP activation (block/mlp_activations.hpp
// lists them); its scalar formulas serve the training kernels (model/kernels/elementwise.hpp)
// and the serial reference alike.
#include <Kokkos_Macros.hpp>

#include "block/activations/activation_kinds.hpp"
#include "core/fast_exp.hpp"

namespace meshslice {

struct GeluActivation : UngatedActivation {
  static constexpr const char* name = "gelu";
  static constexpr const char* meaning = "GPT's: ff2(gelu(ff1 x))";

  // Tanh approximation (GPT-2): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
  // computed as x sigmoid(2u), the same function: one exp (core/fast_exp.hpp, vectorized)
  // instead of a tanh, which costs three times as much in glibc, and no cancellation for large
  // negative x.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x) {
    return x * sigmoid_2u(x);
  }
  // d/dx x s(x) with s = sigmoid(2u): s + x s (1 - s) 2 du/dx.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x) {
    const T two_c = T(2 * 0.7978845608028654);
    const T s = sigmoid_2u(x);
    return s + x * s * (T(1) - s) * two_c * (T(1) + T(3 * 0.044715) * x * x);
  }

 private:
  template <class T>
  KOKKOS_INLINE_FUNCTION static T sigmoid_2u(T x) {  // sigmoid(2u) = 0.5 (1 + tanh(u))
    const T two_c = T(2 * 0.7978845608028654);
    return T(1) / (T(1) + kmath::fast_exp(-two_c * (x + T(0.044715) * x * x * x)));
  }
};

}  // namespace meshslice
