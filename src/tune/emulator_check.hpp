#pragma once
// The tuner checked against the emulator (no data), as the paper checks its cost model against
// its simulator (§4.5, Figs. 13 and 14): the tuner's mesh and per-GEMM S emulated, beside the
// emulator's own optimum (every mesh, every GEMM at its emulated-best S: sim::best_configuration),
// and the cost model's prediction beside the emulated time on every usable mesh.
#include <vector>

#include "hardware/model.hpp"
#include "tune/block_tuner.hpp"

namespace meshslice::tune {

struct MeshComparison {
  int rows = 0;
  int cols = 0;
  double predicted = 0;  // the tuner's seconds on this mesh
  double emulated = 0;   // the same GEMMs at the same S, emulated
  double error() const { return predicted / emulated - 1; }
};

struct EmulatorCheck {
  std::vector<MeshComparison> meshes;  // every usable mesh of the tuning
  MeshComparison tuned;                // the tuner's choice
  double optimum = 0;                  // the emulator's best seconds over meshes and S
  int optimum_rows = 0;
  int optimum_cols = 0;

  // How much slower the tuner's choice runs on the emulator than the emulator's optimum.
  double gap() const { return tuned.emulated / optimum - 1; }
  // Mean of |predicted / emulated - 1| over the usable meshes.
  double mean_absolute_error() const;
};

EmulatorCheck check_against_emulator(const hw::MachineModel& machine, const BlockTuning& tuning,
                                     const std::vector<sim::FcGemm>& gemms,
                                     const sim::SweepOptions& options);

}  // namespace meshslice::tune
