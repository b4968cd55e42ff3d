#include "sim_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/errors.hpp"
#include "gemm/gemm_problem.hpp"
#include "tune/block_tuner.hpp"

namespace meshslice::simapp {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Point run_point(const hw::MachineModel& machine, const SimSettings& s, const sim::LlmSpec* llm,
                sim::Scaling scaling, int chips, Algorithm algorithm) {
  Point p;
  p.llm = llm;
  p.scaling = scaling;
  p.chips = chips;
  p.algorithm = algorithm;
  p.tokens = sim::tokens(scaling, chips, s.workload);
  const auto gemms = sim::block_gemms(*llm, p.tokens);
  p.left_out = sim::no_mesh_reason(algorithm, chips, s.sweep);
  for (const auto& [rows, cols] : sim::mesh_shapes(algorithm, chips, s.sweep)) {
    auto config = sim::evaluate_mesh(machine, algorithm, gemms, rows, cols, s.sweep, &p.left_out);
    if (!config) continue;
    p.meshes.push_back(std::move(*config));
    if (p.best < 0 || p.meshes.back().totals.seconds < p.meshes[p.best].totals.seconds)
      p.best = static_cast<int>(p.meshes.size()) - 1;
  }
  if (p.best >= 0) p.left_out.clear();
  return p;
}

// The cost model's estimate for a block's GEMMs on one mesh: each at `slices`, or at the S the
// tuner finds best when slices == 0. Infinite if some GEMM cannot be sliced.
double cost_model_seconds(const tune::CostModel& model, const std::vector<sim::FcGemm>& gemms,
                          int rows, int cols, int slices, const sim::SweepOptions& options) {
  const tune::MeshChoice mesh = tune::tune_mesh(model, gemms, rows, cols, options, slices);
  return mesh.usable() ? mesh.seconds : std::numeric_limits<double>::infinity();
}

// MeshSlice's weak-scaling point at `chips`: the sweep's, or run now if the sweep has none.
Point weak_meshslice(const hw::MachineModel& machine, const SimSettings& s,
                     const SimResults& results, const sim::LlmSpec* llm, int chips) {
  const Point* done = find_point(results, llm, sim::Scaling::weak, chips, Algorithm::meshslice);
  return done ? *done : run_point(machine, s, llm, sim::Scaling::weak, chips, Algorithm::meshslice);
}

// Fig. 13: MeshSlice on every mesh shape of `chips` chips, weak scaling.
void shape_study(const hw::MachineModel& machine, const SimSettings& s, SimResults& results) {
  const int chips = s.shape_study_chips;
  const tune::CostModel cost(machine), tuner(machine, tune::GemmRate::per_shape);
  for (const sim::LlmSpec* llm : s.models) {
    const auto gemms = sim::block_gemms(*llm, sim::tokens(sim::Scaling::weak, chips, s.workload));
    for (const auto& config : weak_meshslice(machine, s, results, llm, chips).meshes) {
      const double model = cost_model_seconds(cost, gemms, config.rows, config.cols, 0, s.sweep);
      const double tuned = cost_model_seconds(tuner, gemms, config.rows, config.cols, 0, s.sweep);
      results.shapes.push_back(
          {llm, config.rows, config.cols, 0, config.flop_utilization(machine.machine),
           sim::flop_utilization(config.flops, chips, model, machine.machine),
           sim::flop_utilization(config.flops, chips, tuned, machine.machine)});
    }
  }
}

// Fig. 14: MeshSlice at every S (the same for all GEMMs) on one mesh, weak scaling.
void slice_study(const hw::MachineModel& machine, const SimSettings& s, SimResults& results) {
  const int rows = s.slice_study_rows, cols = s.slice_study_cols, chips = rows * cols;
  const tune::CostModel cost(machine), tuner(machine, tune::GemmRate::per_shape);
  for (const sim::LlmSpec* llm : s.models) {
    const auto gemms = sim::block_gemms(*llm, sim::tokens(sim::Scaling::weak, chips, s.workload));
    for (int S : s.sweep.slices) {
      sim::SweepOptions one = s.sweep;
      one.slices = {S};
      const auto config = sim::evaluate_mesh(machine, Algorithm::meshslice, gemms, rows, cols, one);
      if (!config) continue;  // some GEMM cannot be cut into S slices on this mesh
      const double model = cost_model_seconds(cost, gemms, rows, cols, S, s.sweep);
      const double tuned = cost_model_seconds(tuner, gemms, rows, cols, S, s.sweep);
      results.slices.push_back(
          {llm, rows, cols, S, config->flop_utilization(machine.machine),
           sim::flop_utilization(config->flops, chips, model, machine.machine),
           sim::flop_utilization(config->flops, chips, tuned, machine.machine)});
    }
  }
}

// Table 2: MeshSlice without and with the dataflow optimization.
void dataflow_study(const hw::MachineModel& machine, const SimSettings& s, SimResults& results) {
  const int chips = s.dataflow_study_chips;
  for (const sim::LlmSpec* llm : s.models) {
    const std::size_t tokens = sim::tokens(sim::Scaling::weak, chips, s.workload);
    auto plain = sim::best_configuration(
        machine, Algorithm::meshslice, sim::y_stationary_block_gemms(*llm, tokens), chips, s.sweep);
    const Point tuned = weak_meshslice(machine, s, results, llm, chips);
    if (plain && tuned.best_config())
      results.dataflows.push_back({llm, chips, *plain, *tuned.best_config()});
  }
}

// What the sweep adds to each workload's points once MeshSlice's best mesh is known: the
// non-FC time on that mesh, Wang and SUMMA at MeshSlice's per-GEMM S there, and Wang with the
// ring it decomposes chosen per GEMM.
void add_meshslice_references(const hw::MachineModel& machine, const SimSettings& s,
                              SimResults& results) {
  for (const Point& ms : results.points) {
    if (ms.algorithm != Algorithm::meshslice || !ms.best_config()) continue;
    const sim::Configuration& mesh = *ms.best_config();
    const sim::NonFcTime non_fc =
        sim::non_fc_time(machine, *ms.llm, ms.tokens, s.workload.sequence, mesh.rows, mesh.cols);
    std::vector<int> slices;
    for (const auto& g : mesh.gemms) slices.push_back(g.slices);
    const auto gemms = sim::block_gemms(*ms.llm, ms.tokens);
    for (Point& p : results.points) {
      if (p.llm != ms.llm || p.scaling != ms.scaling || p.chips != ms.chips) continue;
      p.non_fc = non_fc;
      if (p.algorithm == Algorithm::wang || p.algorithm == Algorithm::summa)
        p.at_meshslice_s = sim::evaluate_at_slices(machine, p.algorithm, gemms, mesh.rows,
                                                   mesh.cols, slices, s.sweep);
      if (p.algorithm == Algorithm::wang) {
        sim::SweepOptions both = s.sweep;
        both.wang_rings = {WangRing::col, WangRing::row};
        // Already what the sweep ran when its deck lets Wang decompose either ring.
        const auto& swept = s.sweep.wang_rings;
        const bool swept_both = std::count(swept.begin(), swept.end(), WangRing::col) > 0 &&
                                std::count(swept.begin(), swept.end(), WangRing::row) > 0;
        p.either_ring = swept_both && p.best_config()
                            ? std::optional<sim::Configuration>(*p.best_config())
                            : sim::best_configuration(machine, p.algorithm, gemms, p.chips, both);
      }
    }
  }
}

}  // namespace

const Point* find_point(const SimResults& results, const sim::LlmSpec* llm, sim::Scaling scaling,
                        int chips, Algorithm algorithm) {
  for (const auto& p : results.points)
    if (p.llm == llm && p.scaling == scaling && p.chips == chips && p.algorithm == algorithm)
      return &p;
  return nullptr;
}

SimResults run_simulations(const hw::MachineModel& machine, const SimSettings& s) {
  SimResults results;
  const auto start = std::chrono::steady_clock::now();
  for (const sim::LlmSpec* llm : s.models)
    for (sim::Scaling scaling : s.scalings)
      for (int chips : s.chips)
        for (Algorithm algorithm : s.algorithms)
          if (sim::evaluated(algorithm, scaling))
            results.points.push_back(run_point(machine, s, llm, scaling, chips, algorithm));
  add_meshslice_references(machine, s, results);
  results.sweep_seconds = seconds_since(start);
  const auto studies = std::chrono::steady_clock::now();
  if (s.shape_study_chips > 0) shape_study(machine, s, results);
  if (s.dataflow_study_chips > 0) dataflow_study(machine, s, results);
  if (s.slice_study_rows > 0) slice_study(machine, s, results);
  results.study_seconds = seconds_since(studies);
  return results;
}

}  // namespace meshslice::simapp
