#pragma once
// exp that compilers vectorize: the training step's GeLU and softmax evaluate exp on every
// element of large activations, and glibc's expf is a call per element that no loop around it
// vectorizes. For float: Cody-Waite range reduction to r in [-ln2/2, ln2/2], a degree-7
// polynomial for e^r (Cephes' expf coefficients; at most 1 ulp from the correctly rounded
// result) and 2^k built in the exponent bits. Arguments are clamped to [-87, 88] (e^-87 is the
// smallest normal float's order, e^88 the largest): beyond, the result saturates instead of
// reaching 0 or inf, which no caller here can tell apart. Without branches, so a loop over it
// vectorizes once the compiler may evaluate both sides of a comparison (-fno-trapping-math).
// double keeps the library's exp: the reference tests compare in double.
#include <Kokkos_Macros.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/host_vectors.hpp"

namespace meshslice::kmath {

namespace fast_exp_detail {

// c as a value of x's type: a float, or a vector with c in every lane.
KOKKOS_INLINE_FUNCTION float like(float, float c) { return c; }

// A float's bits as an int32 and back (memcpy: the defined way to reinterpret a scalar).
KOKKOS_INLINE_FUNCTION std::int32_t bits_of(float x) {
  std::int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
KOKKOS_INLINE_FUNCTION float float_of(std::int32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
#if MESHSLICE_HOST_VECTOR_FOLDS
// The same for a vector of floats (a cast between vector types of one size keeps the bits).
using FloatBits = VectorOf<std::int32_t, kHostVectorLanes<float>>::type;
inline HostVector<float> like(HostVector<float>, float c) { return filled_vector(c); }
inline FloatBits bits_of(HostVector<float> x) { return (FloatBits)x; }
inline HostVector<float> float_of(FloatBits bits) { return (HostVector<float>)bits; }
#endif

// F is float or, on a host that has them, a vector of floats: every lane takes the same steps.
template <class F>
KOKKOS_INLINE_FUNCTION F exp_steps(F x) {
  const F lo = like(x, -87.0f), hi = like(x, 88.0f);
  x = x > lo ? x : lo;
  x = x < hi ? x : hi;
  // Adding 1.5 * 2^23 rounds to the nearest integer k, which then sits in the low bits of the
  // sum's mantissa: 2^k is built from those bits.
  const float shifter = 12582912.0f;
  const F shifted = x * 1.44269504088896341f + shifter;
  const F k = shifted - shifter;
  const F r = (x - k * 0.693359375f) + k * 2.12194440e-4f;  // ln 2 in two parts
  F p = like(r, 1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const auto k_bits = bits_of(shifted) - 0x4B400000;  // = k, |k| < 2^22
  return p * float_of((k_bits + 127) << 23);
}

}  // namespace fast_exp_detail

KOKKOS_INLINE_FUNCTION float fast_exp(float x) { return fast_exp_detail::exp_steps(x); }

KOKKOS_INLINE_FUNCTION double fast_exp(double x) { return exp(x); }

#if MESHSLICE_HOST_VECTOR_FOLDS
// Lane by lane what fast_exp(float) gives, in one vector's instructions.
inline HostVector<float> fast_exp(HostVector<float> x) { return fast_exp_detail::exp_steps(x); }
#endif

}  // namespace meshslice::kmath
