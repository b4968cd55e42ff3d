#pragma once
// bfloat16: a float's sign, 8-bit exponent and top 7 mantissa bits, the number format the field
// trains in (float's range, 3 significant digits). Kokkos 3.4 (Debian 12's) has no such type,
// and later Kokkos' bhalf_t differs by backend, so meshslice keeps its own: 16 bits, laid out as
// CUDA's __nv_bfloat16 and oneDNN's bf16, converted to and from float on every backend. It only
// stores numbers; arithmetic is done in float.
//
//     const bfloat16 h = to_bfloat16(x);          // round to nearest, ties to even
//     const float y = to_float(h);                // exact
//     const double z = element_cast<double>(h);  // any two of float, double, bfloat16
//     to_float(space, halves, floats);            // a matrix, as a kernel on `space`
//     to_bfloat16(space, a, a16, b, b16);          // two matrices, in one kernel
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

struct bfloat16 {
  std::uint16_t bits = 0;
};

KOKKOS_INLINE_FUNCTION float to_float(bfloat16 h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h.bits) << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// The nearest bfloat16, ties to the even one (as CUDA's __float2bfloat16 and oneDNN round); a
// NaN stays a NaN (quieted), infinities stay infinite, and a float past the largest bfloat16
// rounds to infinity.
KOKKOS_INLINE_FUNCTION bfloat16 to_bfloat16(float f) {
  std::uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  bfloat16 h;
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // a NaN: keep it one whatever its payload
    h.bits = static_cast<std::uint16_t>((bits >> 16) | 0x40u);
    return h;
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  h.bits = static_cast<std::uint16_t>(bits >> 16);
  return h;
}

// One element as another scalar type (float, double or bfloat16): bf16 by way of float.
template <class To, class From>
KOKKOS_INLINE_FUNCTION To element_cast(From x) {
  if constexpr (std::is_same_v<To, bfloat16>)
    return to_bfloat16(static_cast<float>(x));
  else if constexpr (std::is_same_v<From, bfloat16>)
    return static_cast<To>(to_float(x));
  else
    return static_cast<To>(x);
}

// The same conversions of whole matrices (shapes equal), one kernel on `space`.
inline void to_float(const ExecSpace& space, const Matrix<bfloat16>& in, const Matrix<float>& out) {
  const bfloat16* from = in.data();
  float* to = out.data();
  Kokkos::parallel_for(
      "to_float", Kokkos::RangePolicy<ExecSpace>(space, 0, elements(in)),
      KOKKOS_LAMBDA(std::size_t i) { to[i] = to_float(from[i]); });
}
// Elements one iteration of to_bfloat16 rounds: a contiguous run on a CPU, whose loop the
// compiler vectorizes (an iteration per element, with its choice between the two operands, ran
// scalar: 2.5 ns an element against 0.34 on one core, 2026-11-29); one on a GPU, whose
// neighbouring threads then take neighbouring elements.
constexpr std::size_t kRoundingRun = kRunsOnHost ? 2048 : 1;

// A GEMM's two operands at once: one launch instead of two.
inline void to_bfloat16(const ExecSpace& space, const Matrix<float>& a, const Matrix<bfloat16>& a16,
                        const Matrix<float>& b, const Matrix<bfloat16>& b16) {
  const float *from_a = a.data(), *from_b = b.data();
  bfloat16 *to_a = a16.data(), *to_b = b16.data();
  const std::size_t na = elements(a), nb = elements(b), run = kRoundingRun;
  const std::size_t runs_a = (na + run - 1) / run, runs = runs_a + (nb + run - 1) / run;
  Kokkos::parallel_for(
      "to_bfloat16", Kokkos::RangePolicy<ExecSpace>(space, 0, runs), KOKKOS_LAMBDA(std::size_t r) {
        const bool in_a = r < runs_a;
        const float* from = in_a ? from_a : from_b;
        bfloat16* to = in_a ? to_a : to_b;
        const std::size_t n = in_a ? na : nb, first = (in_a ? r : r - runs_a) * run;
        const std::size_t last = first + run < n ? first + run : n;
        for (std::size_t i = first; i < last; ++i) to[i] = to_bfloat16(from[i]);
      });
}

}  // namespace meshslice
