#pragma once
// meshslice-sim's runs: the weak/strong sweep over models, chip counts, algorithms and mesh
// shapes, and the two MeshSlice studies (mesh shapes, slice counts) against the analytical
// cost model.
#include <optional>
#include <vector>

#include "hardware/model.hpp"
#include "sim/non_fc_work.hpp"
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
  int best = -1;         // index into meshes; -1: no mesh shape is valid (e.g. Cannon, 32 chips)
  std::string left_out;  // why no mesh shape is valid, when none is
  // The block's work beyond its FC layers on each chip, the same for every algorithm (timed on
  // MeshSlice's best mesh): FC time + non_fc.seconds is the end-to-end time.
  sim::NonFcTime non_fc;
  // Wang and SUMMA on MeshSlice's best mesh with each GEMM's loop count at MeshSlice's S, as the
  // paper runs them (§4.2; sim::evaluate_at_slices); beside their own best S above.
  std::optional<sim::Configuration> at_meshslice_s;
  // Wang with the ring it decomposes chosen per GEMM (col or row), at its best mesh and S.
  std::optional<sim::Configuration> either_ring;
  const sim::Configuration* best_config() const { return best < 0 ? nullptr : &meshes[best]; }
  double end_to_end_seconds() const { return best_config()->totals.seconds + non_fc.seconds; }
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

// Table 2: MeshSlice with every layer Y-stationary and with the tuned dataflows, each at its
// best mesh (weak scaling).
struct DataflowRow {
  const sim::LlmSpec* llm = nullptr;
  int chips = 0;
  sim::Configuration y_stationary, tuned;
};

struct SimResults {
  std::vector<Point> points;
  std::vector<DataflowRow> dataflows;  // Table 2
  std::vector<StudyRow> shapes;        // Fig. 13
  std::vector<StudyRow> slices;        // Fig. 14
  double sweep_seconds = 0;            // wall time of the sweep (points) alone
  double study_seconds = 0;
};

SimResults run_simulations(const hw::MachineModel& machine, const SimSettings& settings);

// The point of (model, scaling, chips, algorithm), or nullptr if it was not run.
const Point* find_point(const SimResults& results, const sim::LlmSpec* llm, sim::Scaling scaling,
                        int chips, Algorithm algorithm);

}  // namespace meshslice::simapp
