#pragma once
// The scalar formulas of the model, shared by the serial reference and the
// distributed kernels so that both compute the same thing element by element (what the
// distributed model adds — layouts, collectives, the GEMM library — is what the tests check).
#include <cmath>
#include <cstddef>

#include "core/fast_exp.hpp"
#include "core/kokkos_compat.hpp"
#include "model/counter_random.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// GeLU, tanh approximation (GPT-2): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// computed as x sigmoid(2u), the same function: one exp (core/fast_exp.hpp, vectorized) instead
// of a tanh, which costs three times as much in glibc, and no cancellation for large negative x.
template <class T>
KOKKOS_INLINE_FUNCTION T gelu_sigmoid(T x) {  // sigmoid(2u) = 0.5 (1 + tanh(u))
  const T two_c = T(2 * 0.7978845608028654);
  return T(1) / (T(1) + kmath::fast_exp(-two_c * (x + T(0.044715) * x * x * x)));
}

template <class T>
KOKKOS_INLINE_FUNCTION T gelu(T x) {
  return x * gelu_sigmoid(x);
}

// d/dx x s(x) with s = sigmoid(2u): s + x s (1 - s) 2 du/dx.
template <class T>
KOKKOS_INLINE_FUNCTION T gelu_derivative(T x) {
  const T two_c = T(2 * 0.7978845608028654);
  const T s = gelu_sigmoid(x);
  return s + x * s * (T(1) - s) * two_c * (T(1) + T(3 * 0.044715) * x * x);
}

// SiLU (swish), SwiGLU's gate: x sigmoid(x), with the same exp as GeLU's.
template <class T>
KOKKOS_INLINE_FUNCTION T silu_sigmoid(T x) {
  return T(1) / (T(1) + kmath::fast_exp(-x));
}

// SwiGLU's element: silu(g) u, and its partial derivatives dz/dg = u silu'(g) and dz/du =
// silu(g), with silu'(g) = s + g s (1 - s), s = sigmoid(g).
template <class T>
KOKKOS_INLINE_FUNCTION T swiglu(T g, T u) {
  return g * silu_sigmoid(g) * u;
}
template <class T>
KOKKOS_INLINE_FUNCTION void swiglu_derivatives(T g, T u, T& d_gate, T& d_up) {
  const T s = silu_sigmoid(g);
  d_gate = u * (s + g * s * (T(1) - s));
  d_up = g * s;
}

// Initial value of logical element (row, col) of a parameter; gains start at 1.
KOKKOS_INLINE_FUNCTION double init_value(std::uint64_t seed, std::uint64_t stream, double std_dev,
                                         std::size_t row, std::size_t col) {
  if (std_dev == 0) return 1.0;  // a gain (block_layers.hpp's parameter_std)
  return std_dev * counter_normal(seed, stream, row, col);
}

}  // namespace meshslice
