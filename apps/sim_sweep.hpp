#pragma once
// meshslice-sim's runs: the weak/strong sweep over models, chip counts, algorithms and mesh
// shapes, and the two MeshSlice studies (mesh shapes, slice counts) against the analytical
// cost model.
#include <vector>

#include "hardware/model.hpp"
#include "sim/sweep.hpp"
#include "sim_settings.hpp"

namespace meshslice::simapp {

// One algorithm on one workload: every mesh shape it runs on, each GEMM at its best S.
struct Point {
  const sim::LlmSpec* llm = nullptr;
  sim::Scaling scaling = sim::Scaling::weak;
  int chips = 0;
  Algorithm algorithm = Algorithm::meshslice;
  std::size_t tokens = 0;
  std::vector<sim::Configuration> meshes;
  int best = -1;  // index into meshes; -1: no mesh shape is valid (e.g. Cannon, 32 chips)
  std::string left_out;  // why no mesh shape is valid, when none is
  const sim::Configuration* best_config() const { return best < 0 ? nullptr : &meshes[best]; }
};

// MeshSlice's FLOP utilization, emulated and estimated by the analytical cost model: with one
// effective FLOP/s (the paper's formula) and with each local GEMM at the chip's rate for its
// shape (meshslice-tune's default).
struct StudyRow {
  const sim::LlmSpec* llm = nullptr;
  int rows = 0, cols = 0;
  int slices = 0;  // the common S (slice study); 0: each GEMM at its own best S (shape study)
  double emulated = 0;
  double cost_model = 0;
  double tuner = 0;
};

struct SimResults {
  std::vector<Point> points;
  std::vector<StudyRow> shapes;  // Fig. 13
  std::vector<StudyRow> slices;  // Fig. 14
  double sweep_seconds = 0;      // wall time of the sweep (points) alone
  double study_seconds = 0;
};

SimResults run_simulations(const hw::MachineModel& machine, const SimSettings& settings);

// The point of (model, scaling, chips, algorithm), or nullptr if it was not run.
const Point* find_point(const SimResults& results, const sim::LlmSpec* llm, sim::Scaling scaling,
                        int chips, Algorithm algorithm);

}  // namespace meshslice::simapp
