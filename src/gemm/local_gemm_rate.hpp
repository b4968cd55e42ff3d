#pragma once
// The FLOP/s of one local GEMM C (m x n) = A (m x k) B (k x n) on this rank, timed alone: the
// best of `repetitions` after a warm-up (the best, because on a shared, noisy machine a median
// of few would let the noise lower the bar). The training driver holds its step to it, and
// meshslice-tune's calibration measures the chip with it.
#include <chrono>

#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

template <class T>
double local_gemm_rate(const ExecSpace& space, std::size_t m, std::size_t n, std::size_t k,
                       int repetitions = 7) {
  Matrix<T> a("gemm_rate_a", m, k), b("gemm_rate_b", k, n), c("gemm_rate_c", m, n);
  Kokkos::deep_copy(a, T(0.5));
  Kokkos::deep_copy(b, T(0.25));
  double best = 1e300;
  for (int rep = 0; rep <= repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    blas_gemm(space, "N", "N", T(1), a, b, T(0), c);
    fence(space, "local_gemm_rate");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep > 0) best = std::min(best, seconds);  // rep 0 warms up
  }
  return 2.0 * m * n * k / best;
}

}  // namespace meshslice
