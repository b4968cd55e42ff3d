// meshslice-bench mode "local_gemm": one rank's local GEMM in float (the BLAS's sgemm) and in
// bf16 by every route this build has (exec/local_gemm_bf16.hpp), timed side by side on the same
// data, each bf16 result checked against a float GEMM of the same bf16 operands.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_modes.hpp"
#include "core/csv.hpp"
#include "core/deck.hpp"
#include "core/log.hpp"
#include "exec/local_gemm_bf16.hpp"
#include "gemm/local_gemm_rate.hpp"

namespace meshslice::bench {

namespace {

std::string decimals(double x, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

// The largest |x - y| / max|y| over two results.
double relative_error(const Matrix<float>& x, const Matrix<float>& y) {
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < hx.extent(0); ++i)
    for (std::size_t j = 0; j < hx.extent(1); ++j) {
      diff = std::max(diff, std::abs(double(hx(i, j)) - double(hy(i, j))));
      scale = std::max(scale, std::abs(double(hy(i, j))));
    }
  return scale > 0 ? diff / scale : diff;
}

// A matrix of uniform values in [-1, 1), as bf16 (the operands) and exactly the same in float.
void fill(std::size_t rows, std::size_t cols, unsigned seed, Matrix<bfloat16>& half,
          Matrix<float>& single) {
  half = Matrix<bfloat16>("bench_bf16", rows, cols);
  single = Matrix<float>("bench_float", rows, cols);
  auto h = Kokkos::create_mirror_view(half);
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) h(i, j) = to_bfloat16(uniform(random));
  Kokkos::deep_copy(half, h);
  ExecSpace space;
  to_float(space, half, single);
  fence(space, "local_gemm bench: operands");
}

}  // namespace

void add_local_gemm_parameters(Teuchos::ParameterList& valid) {
  auto& g = valid.sublist("local_gemm", false,
                          "mode local_gemm: one rank's GEMM in float and in bf16 by each route");
  auto ints = [](std::vector<int> v) { return Teuchos::Array<int>(v.begin(), v.end()); };
  g.set("M", ints({2048, 2048}), "rows of C, one entry per shape");
  g.set("N", ints({2048, 4096}), "columns of C, one entry per shape");
  g.set("K", ints({2048, 1024}), "inner dimension, one entry per shape");
  g.set("repetitions", 5, "timed runs per route and shape (the fastest reported)");
}

int run_local_gemm_bench(AppContext& context) {
  const auto M = get_ints(context.deck, "local_gemm.M"), N = get_ints(context.deck, "local_gemm.N"),
             K = get_ints(context.deck, "local_gemm.K");
  require(M.size() == N.size() && M.size() == K.size() && !M.empty(),
          "local_gemm.M, N and K list one entry per shape: give them the same length");
  for (std::size_t i = 0; i < M.size(); ++i)
    require(M[i] > 0 && N[i] > 0 && K[i] > 0, "local_gemm shape ", i, " (", M[i], " x ", N[i],
            " x ", K[i], ") needs positive sizes");
  const int repetitions = get_param<int>(context.deck, "local_gemm.repetitions");
  require(repetitions > 0, "local_gemm.repetitions = ", repetitions, " must be positive");
  return run_on_rank_zero(context, [&] {
    const auto threads = [](const char* variable) {
      const char* value = std::getenv(variable);
      return std::string(value ? value : "unset (every core)");
    };
    log_info("one rank's local GEMM: float through the BLAS, bf16 by each route of this build; "
             "threads: OPENBLAS_NUM_THREADS ",
             threads("OPENBLAS_NUM_THREADS"), ", OMP_NUM_THREADS (oneDNN's) ",
             threads("OMP_NUM_THREADS"));
    CsvWriter csv(context.out_dir + "/local_gemm.csv",
                  {"M", "N", "K", "route", "seconds", "gflops", "over_float", "max_rel_error"});
    ExecSpace space;
    for (std::size_t i = 0; i < M.size(); ++i) {
      const std::size_t m = M[i], n = N[i], k = K[i];
      Matrix<bfloat16> a, b;
      Matrix<float> af, bf;
      fill(m, k, 1, a, af);
      fill(k, n, 2, b, bf);
      Matrix<float> reference("bench_reference", m, n), c("bench_c", m, n);
      const double flops = 2.0 * m * n * k;
      const double single = flops / best_gemm_rate(space, m, n, k, repetitions, [&] {
                              blas_gemm(space, "N", "N", 1.0f, af, bf, 0.0f, reference);
                            });
      log_info(m, " x ", n, " x ", k, ": float (BLAS sgemm) ", decimals(flops / single / 1e9, 1),
               " GFLOP/s");
      csv.row(m, n, k, "float", single, flops / single / 1e9, 1.0, 0.0);
      for (const Bf16GemmRoute route : kBf16GemmRoutes) {
        if (!bf16_route_available(route)) {
          log_info("  bf16 ", bf16_route_name(route), ": does not run here (needs ",
                   bf16_route_needs(route), ")");
          continue;
        }
        LocalGemmBf16 gemm(route, m * k, k * n);
        const double seconds = flops / best_gemm_rate(space, m, n, k, repetitions,
                                                      [&] { gemm.run(space, a, b, 0.0f, c); });
        const double error = relative_error(c, reference);
        log_info("  bf16 ", bf16_route_name(route), " ", decimals(flops / seconds / 1e9, 1),
                 " GFLOP/s, ", decimals(single / seconds, 2),
                 "x float; max relative error against float on the same operands ", error);
        csv.row(m, n, k, bf16_route_name(route), seconds, flops / seconds / 1e9, single / seconds,
                error);
      }
    }
    csv.finish();
    log_info("wrote ", context.out_dir, "/local_gemm.csv");
    return 0;
  });
}

}  // namespace meshslice::bench
