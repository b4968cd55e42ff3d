#pragma once
// meshslice-sim's deck: what to sweep (models, scenarios, chip counts, algorithms, S values),
// the machine to emulate, the mesh-shape and slice-count studies, and what to write.
#include <Teuchos_ParameterList.hpp>

#include <string>
#include <vector>

#include "gemm/algorithm.hpp"
#include "pipeline/pipeline_schedule.hpp"
#include "sim/fc_layers.hpp"
#include "sim/sweep.hpp"

namespace meshslice::simapp {

// A training step with pipeline stages at each pp of `pp` (dp x pp x rows x cols = chips, the
// global batch fixed), by the data-free emulation of the training driver.
struct PipelineSweep {
  std::vector<int> pp;  // empty: no sweep
  const sim::LlmSpec* model = nullptr;
  int chips = 256, rows = 8, cols = 8, blocks = 8, global_sequences = 64, slices = 4;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
};

struct SimSettings {
  std::string machine;  // name of a shipped description or a path
  std::vector<const sim::LlmSpec*> models;
  std::vector<sim::Scaling> scalings;
  std::vector<int> chips;
  std::vector<Algorithm> algorithms;
  bool all_meshes = false;  // sim.csv lists every mesh shape, not just each algorithm's best
  sim::SweepOptions sweep;
  sim::WorkloadOptions workload;
  int shape_study_chips = 0;     // Fig. 13: MeshSlice on every mesh of this many chips
  int dataflow_study_chips = 0;  // Table 2: MeshSlice without and with the dataflow choice
  int slice_study_rows = 0;      // Fig. 14: MeshSlice at every S on this mesh
  int slice_study_cols = 0;
  int trace_chips = 0;  // Chrome traces of every best configuration at this count
  bool plots = true;
  PipelineSweep pipeline;
};

void add_sim_parameters(Teuchos::ParameterList& valid);
// Reads and checks the validated deck; UserErrors name the key and the fix.
SimSettings sim_settings_from(const Teuchos::ParameterList& deck);

}  // namespace meshslice::simapp
