#pragma once
// The FLOP/s of one local GEMM C (m x n) = A (m x k) B (k x n) on this rank, timed alone: the
// best of `repetitions` after a warm-up (the best, because on a shared, noisy machine a median
// of few would let the noise lower the bar). The training driver holds its step to it, and
// meshslice-tune's calibration measures the chip with it. A bf16 run's is its bf16 local GEMM's
// (exec/local_gemm_bf16.hpp), a tf32 run's its TF32 GEMM's (exec/local_gemm_tf32.hpp).
// `together`, when given, runs before each repetition: ranks that share a machine's memory (or
// a GPU) pass a barrier there, so every repetition they time runs while the others run theirs,
// as the step's GEMMs do. Unsynchronised, a rank that finished first left the others' last
// repetitions alone on the shared cache and memory, and the best of them overstated the rate.
#include <algorithm>
#include <chrono>
#include <functional>

#include "core/bfloat16.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "exec/local_gemm_bf16.hpp"
#include "exec/local_gemm_tf32.hpp"

namespace meshslice {

using RepetitionSync = std::function<void()>;

// 2 m n k over the best time of run() on `space`.
template <class Run>
double best_gemm_rate(const ExecSpace& space, std::size_t m, std::size_t n, std::size_t k,
                      int repetitions, Run&& run, const RepetitionSync& together = {}) {
  double best = 1e300;
  for (int rep = 0; rep <= repetitions; ++rep) {
    if (together) together();
    const auto start = std::chrono::steady_clock::now();
    run();
    fence(space, "local_gemm_rate");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep > 0) best = std::min(best, seconds);  // rep 0 warms up
  }
  return 2.0 * m * n * k / best;
}

// multiply(a, b, c): c = a b on T matrices a (m x k), b (k x n), c (m x n).
template <class T, class Multiply>
double local_gemm_rate_of(const ExecSpace& space, std::size_t m, std::size_t n, std::size_t k,
                          int repetitions, Multiply&& multiply,
                          const RepetitionSync& together = {}) {
  Matrix<T> a("gemm_rate_a", m, k), b("gemm_rate_b", k, n), c("gemm_rate_c", m, n);
  Kokkos::deep_copy(a, T(0.5));
  Kokkos::deep_copy(b, T(0.25));
  return best_gemm_rate(
      space, m, n, k, repetitions, [&] { multiply(a, b, c); }, together);
}

template <class T>
double local_gemm_rate(const ExecSpace& space, std::size_t m, std::size_t n, std::size_t k,
                       int repetitions = 7, const RepetitionSync& together = {}) {
  return local_gemm_rate_of<T>(
      space, m, n, k, repetitions,
      [&](auto& a, auto& b, auto& c) { blas_gemm(space, "N", "N", T(1), a, b, T(0), c); },
      together);
}

inline double local_gemm_rate_bf16(const ExecSpace& space, Bf16GemmRoute route, std::size_t m,
                                   std::size_t n, std::size_t k, int repetitions = 7,
                                   const RepetitionSync& together = {}) {
  Matrix<bfloat16> a("gemm_rate_a", m, k), b("gemm_rate_b", k, n);
  Matrix<float> c("gemm_rate_c", m, n);
  Kokkos::deep_copy(a, to_bfloat16(0.5f));
  Kokkos::deep_copy(b, to_bfloat16(0.25f));
  LocalGemmBf16 gemm(route, m * k, k * n);
  return best_gemm_rate(
      space, m, n, k, repetitions, [&] { gemm.run(space, a, b, 0.0f, c); }, together);
}

inline double local_gemm_rate_tf32(const ExecSpace& space, std::size_t m, std::size_t n,
                                   std::size_t k, int repetitions = 7,
                                   const RepetitionSync& together = {}) {
  LocalGemmTf32 gemm;
  return local_gemm_rate_of<float>(
      space, m, n, k, repetitions,
      [&](auto& a, auto& b, auto& c) { gemm.run(space, false, false, 1.0f, a, b, 0.0f, c); },
      together);
}

}  // namespace meshslice
