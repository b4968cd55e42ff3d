#include "tune/emulator_check.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "sim/emulate.hpp"

namespace meshslice::tune {

double EmulatorCheck::mean_absolute_error() const {
  double sum = 0;
  for (const MeshComparison& m : meshes) sum += std::abs(m.error());
  return meshes.empty() ? 0 : sum / meshes.size();
}

namespace {

double emulated_seconds(const hw::MachineModel& machine, const MeshChoice& mesh,
                        const sim::SweepOptions& options) {
  double total = 0;
  for (const TunedGemm& g : mesh.gemms)
    total += sim::emulate_gemm(machine, Algorithm::meshslice, g.gemm.problem, mesh.rows, mesh.cols,
                               sim::gemm_options(g.slices, options))
                 .totals.seconds;
  return total;
}

}  // namespace

EmulatorCheck check_against_emulator(const hw::MachineModel& machine, const BlockTuning& tuning,
                                     const std::vector<sim::FcGemm>& gemms,
                                     const sim::SweepOptions& options) {
  EmulatorCheck check;
  for (const MeshChoice& mesh : tuning.meshes)
    if (mesh.usable())
      check.meshes.push_back(
          {mesh.rows, mesh.cols, mesh.seconds, emulated_seconds(machine, mesh, options)});
  const MeshChoice& best = tuning.best_mesh();
  for (const MeshComparison& m : check.meshes)
    if (m.rows == best.rows && m.cols == best.cols) check.tuned = m;
  const auto optimum =
      sim::best_configuration(machine, Algorithm::meshslice, gemms, tuning.chips, options);
  require(optimum.has_value(), "the emulator finds no valid configuration of ", tuning.chips,
          " chips although the tuner does");
  check.optimum = optimum->totals.seconds;
  check.optimum_rows = optimum->rows;
  check.optimum_cols = optimum->cols;
  return check;
}

}  // namespace meshslice::tune
