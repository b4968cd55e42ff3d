#include "sim/sweep.hpp"

#include <limits>

#include "core/errors.hpp"
#include "sim/emulate.hpp"

namespace meshslice::sim {

double flop_utilization(double flops, int chips, double seconds, const hw::Machine& machine) {
  return flops / (chips * machine.chip.utilization_flops() * seconds);
}

double Configuration::flop_utilization(const hw::Machine& machine) const {
  return sim::flop_utilization(flops, chips(), totals.seconds, machine);
}

double flop_utilization(const GemmResult& r, int chips, const hw::Machine& machine) {
  return flop_utilization(r.gemm.flops(), chips, r.totals.seconds, machine);
}

GemmOptions gemm_options(int slices, const SweepOptions& options, WangRing wang_ring) {
  return GemmOptions{slices, slices == 1 ? 1 : options.block, wang_ring};
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
    const bool sides = rows >= options.min_mesh_side && cols >= options.min_mesh_side;
    if (sides && (algorithm != Algorithm::cannon || rows == cols)) shapes.emplace_back(rows, cols);
  }
  return shapes;
}

std::string no_mesh_reason(Algorithm algorithm, int chips, const SweepOptions& options) {
  if (!mesh_shapes(algorithm, chips, options).empty()) return "";
  if (options.rows > 0) return concat("no mesh of ", chips, " chips has ", options.rows, " rows");
  if (algorithm == Algorithm::cannon)
    return concat("Cannon needs a square mesh with sides of at least min_mesh_side = ",
                  options.min_mesh_side, "; ", chips, " chips make none");
  return concat("no factorization of ", chips,
                " chips has both sides >= min_mesh_side = ", options.min_mesh_side);
}

namespace {

// Every GEMM on one mesh at the options candidates(i) gives for GEMM i: the fastest of them, or
// with `first_valid` the first one the algorithm takes and the chip's HBM holds.
template <class Candidates>
std::optional<Configuration> evaluate_gemms(const hw::MachineModel& machine, Algorithm algorithm,
                                            const std::vector<FcGemm>& gemms, int rows, int cols,
                                            Candidates&& candidates, bool first_valid,
                                            std::string* why) {
  Configuration config;
  config.algorithm = algorithm;
  config.rows = rows;
  config.cols = cols;
  const double hbm = machine.machine.chip.hbm_capacity_bytes;
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const FcGemm& gemm = gemms[i];
    std::optional<GemmResult> best;
    std::string reason;
    for (const GemmOptions& o : candidates(i)) {
      try {
        const EmulatedGemm r = emulate_gemm(machine, algorithm, gemm.problem, rows, cols, o);
        if (r.totals.memory_bytes > hbm) {
          reason = concat("needs ", r.totals.memory_bytes / (1 << 30),
                          " GiB per chip, more than "
                          "the chip's ",
                          hbm / (1 << 30), " GiB of HBM");
          continue;
        }
        if (!best || r.totals.seconds < best->totals.seconds)
          best = GemmResult{gemm, o.slices, r.totals, o.wang_ring};
        if (first_valid) break;
      } catch (const UserError& e) {
        // This S (or mesh) does not fit this GEMM: the algorithm said why; try the next.
        if (reason.empty()) reason = e.what();
      }
    }
    if (!best) {
      if (why) *why = concat(rows, "x", cols, ": ", gemm.label(), ": ", reason);
      return std::nullopt;
    }
    config.totals += best->totals;
    config.flops += gemm.flops();
    config.gemms.push_back(std::move(*best));
  }
  return config;
}

}  // namespace

std::optional<Configuration> evaluate_mesh(const hw::MachineModel& machine, Algorithm algorithm,
                                           const std::vector<FcGemm>& gemms, int rows, int cols,
                                           const SweepOptions& options, std::string* why) {
  std::vector<GemmOptions> candidates;
  const std::vector<WangRing> col_only = {WangRing::col};
  for (WangRing ring : algorithm == Algorithm::wang ? options.wang_rings : col_only)
    for (int S : slice_candidates(algorithm, options))
      candidates.push_back(gemm_options(S, options, ring));
  return evaluate_gemms(
      machine, algorithm, gemms, rows, cols, [&](std::size_t) { return candidates; }, false, why);
}

std::optional<Configuration> evaluate_at_slices(const hw::MachineModel& machine,
                                                Algorithm algorithm,
                                                const std::vector<FcGemm>& gemms, int rows,
                                                int cols, const std::vector<int>& slices,
                                                const SweepOptions& options, std::string* why) {
  require(slices.size() == gemms.size(), "evaluate_at_slices: ", slices.size(), " S values for ",
          gemms.size(), " GEMMs");
  return evaluate_gemms(
      machine, algorithm, gemms, rows, cols,
      [&](std::size_t i) {
        // slices[i], then the smaller S, largest first
        std::vector<GemmOptions> below;
        for (int S = slices[i]; S >= 1; --S) below.push_back(gemm_options(S, options));
        return below;
      },
      true, why);
}

std::optional<Configuration> best_configuration(const hw::MachineModel& machine,
                                                Algorithm algorithm,
                                                const std::vector<FcGemm>& gemms, int chips,
                                                const SweepOptions& options, std::string* why) {
  std::optional<Configuration> best;
  if (why) *why = no_mesh_reason(algorithm, chips, options);
  for (const auto& [rows, cols] : mesh_shapes(algorithm, chips, options)) {
    auto config = evaluate_mesh(machine, algorithm, gemms, rows, cols, options, why);
    if (config && (!best || config->totals.seconds < best->totals.seconds))
      best = std::move(config);
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
