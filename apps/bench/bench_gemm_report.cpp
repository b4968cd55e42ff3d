#include "bench_gemm_report.hpp"

#include <cstdio>
#include <map>

namespace meshslice::bench {

namespace {
std::string optional(double value, const char* format) {
  if (value < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}
}  // namespace

void print_gemm_report(const std::vector<Result>& results, int rows, int cols) {
  std::printf("\n%-11s %-4s %5s %6s %6s %6s %3s %10s %9s %9s %6s %7s %9s %9s %9s %11s\n",
              "algorithm", "flow", "mesh", "M", "N", "K", "S", "seconds", "GFLOP/s", "peak/chip",
              "eff", "hidden", "localgemm", "blas_at_S", "rel_err", "emulated_s");
  for (const auto& r : results)
    std::printf(
        "%-11s %-4s %2dx%-2d %6zu %6zu %6zu %3d %10.4f %9.1f %9.1f %6.3f %7s %9s %9s %9s %11s\n",
        r.algorithm.c_str(), dataflow_name(r.flow), rows, cols, r.problem.M, r.problem.N,
        r.problem.K, r.slices, r.seconds, r.gflops, r.peak_gflops,
        r.gflops / (r.peak_gflops * rows * cols), optional(r.hidden, "%.2f").c_str(),
        optional(r.local_gemm_efficiency, "%.3f").c_str(),
        optional(r.sliced_blas_efficiency, "%.3f").c_str(), optional(r.error, "%.1e").c_str(),
        optional(r.emulated_seconds, "%.3e").c_str());

  // Ratios per (dataflow, shape): MeshSlice at its best S against everything else.
  std::map<std::string, std::vector<const Result*>> groups;
  for (const auto& r : results) groups[r.problem.str()].push_back(&r);
  std::printf("\nSide by side (same run; > 1 means MeshSlice at its best S is faster; ratios of "
              "median and of fastest repetitions):\n");
  for (const auto& [label, group] : groups) {
    const Result* best = nullptr;
    for (const Result* r : group)
      if (r->algorithm == "meshslice" && (!best || r->seconds < best->seconds)) best = r;
    if (!best) continue;
    std::printf("  %s on %dx%d: meshslice best S=%d %.4f s (fastest %.4f s), eff %.3f, local GEMM "
                "at %.3f of the single-call peak (the BLAS alone at S: %s), %.0f%% of "
                "communication hidden\n",
                label.c_str(), rows, cols, best->slices, best->seconds, best->min_seconds,
                best->gflops / (best->peak_gflops * rows * cols), best->local_gemm_efficiency,
                optional(best->sliced_blas_efficiency, "%.3f").c_str(), 100.0 * best->hidden);
    std::map<std::string, const Result*> fastest;  // best configuration of every other algorithm
    for (const Result* r : group)
      if (r->algorithm != "meshslice" &&
          (!fastest.count(r->algorithm) || r->seconds < fastest[r->algorithm]->seconds))
        fastest[r->algorithm] = r;
    for (const auto& [name, r] : fastest)
      std::printf("    vs %-10s %.4f s (fastest %.4f s)  speed-up %.2fx median, %.2fx fastest\n",
                  name.c_str(), r->seconds, r->min_seconds, r->seconds / best->seconds,
                  r->min_seconds / best->min_seconds);
  }
}

}  // namespace meshslice::bench
