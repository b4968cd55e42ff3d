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

namespace meshslice::kmath {

KOKKOS_INLINE_FUNCTION float fast_exp(float x) {
  x = x > -87.0f ? x : -87.0f;
  x = x < 88.0f ? x : 88.0f;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to the nearest integer
  const float k = (x * 1.44269504088896341f + shifter) - shifter;
  const float r = (x - k * 0.693359375f) + k * 2.12194440e-4f;  // ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
  float two_to_k;
  std::memcpy(&two_to_k, &bits, sizeof two_to_k);
  return p * two_to_k;
}

KOKKOS_INLINE_FUNCTION double fast_exp(double x) { return exp(x); }

}  // namespace meshslice::kmath
