#include "sim/sweep.hpp"

#include <limits>

#include "core/errors.hpp"
#include "sim/emulate.hpp"

namespace meshslice::sim {

double flop_utilization(const GemmResult& r, int chips, const hw::Machine& machine) {
  return r.gemm.flops() / (chips * machine.chip.utilization_peak_flops * r.totals.seconds);
}

GemmOptions gemm_options(int slices, const SweepOptions& options) {
  return GemmOptions{slices, slices == 1 ? 1 : options.block};
}

std::vector<int> slice_candidates(Algorithm algorithm, const SweepOptions& options) {
  if (algorithm == Algorithm::collective || algorithm == Algorithm::cannon) return {1};
  return options.slices;
}

std::vector<std::pair<int, int>> mesh_shapes(Algorithm algorithm, int chips,
                                             const SweepOptions& options) {
  if (algorithm == Algorithm::tp1d || algorithm == Algorithm::fsdp) return {{1, chips}};
  std::vector<std::pair<int, int>> shapes;
  for (int rows = 1; rows <= chips; ++rows) {
    if (chips % rows) continue;
    const int cols = chips / rows;
    if (options.rows > 0 && rows != options.rows) continue;
    if (algorithm == Algorithm::cannon ? rows == cols
                                       : rows >= options.min_mesh_side &&
                                             cols >= options.min_mesh_side)
      shapes.emplace_back(rows, cols);
  }
  return shapes;
}

std::optional<Configuration> evaluate_mesh(const hw::MachineModel& machine, Algorithm algorithm,
                                           const std::vector<FcGemm>& gemms, int rows, int cols,
                                           const SweepOptions& options) {
  Configuration config;
  config.algorithm = algorithm;
  config.rows = rows;
  config.cols = cols;
  for (const FcGemm& gemm : gemms) {
    std::optional<GemmResult> best;
    for (int S : slice_candidates(algorithm, options)) {
      try {
        const EmulatedGemm r = emulate_gemm(machine, algorithm, gemm.problem, rows, cols,
                                            gemm_options(S, options));
        if (!best || r.totals.seconds < best->totals.seconds) best = GemmResult{gemm, S, r.totals};
      } catch (const UserError&) {
        // This S (or mesh) does not fit this GEMM: the algorithm said why; try the next.
      }
    }
    if (!best) return std::nullopt;
    config.totals += best->totals;
    config.flops += gemm.flops();
    config.gemms.push_back(std::move(*best));
  }
  return config;
}

std::optional<Configuration> best_configuration(const hw::MachineModel& machine,
                                                Algorithm algorithm,
                                                const std::vector<FcGemm>& gemms, int chips,
                                                const SweepOptions& options) {
  std::optional<Configuration> best;
  for (const auto& [rows, cols] : mesh_shapes(algorithm, chips, options)) {
    auto config = evaluate_mesh(machine, algorithm, gemms, rows, cols, options);
    if (config && (!best || config->totals.seconds < best->totals.seconds)) best = std::move(config);
  }
  return best;
}

const char* scaling_name(Scaling scaling) { return scaling == Scaling::weak ? "weak" : "strong"; }

std::size_t tokens(Scaling scaling, int chips, const WorkloadOptions& workload) {
  const double batch =
      scaling == Scaling::weak ? workload.weak_batch_per_chip * chips : workload.strong_batch;
  const auto whole = static_cast<std::size_t>(batch);
  require(batch >= 1 && whole == batch, "a batch of ", batch, " sequences on ", chips,
          " chips is not a whole number of sequences; choose chip counts and the weak-scaling "
          "batch per chip so that their product is whole");
  return whole * static_cast<std::size_t>(workload.sequence);
}

bool evaluated(Algorithm algorithm, Scaling scaling) {
  return !(algorithm == Algorithm::fsdp && scaling == Scaling::strong);
}

}  // namespace meshslice::sim
