#pragma once
// meshslice-sim's deck: what to sweep (models, scenarios, chip counts, algorithms, S values),
// the machine to emulate, the mesh-shape and slice-count studies, and what to write.
#include <Teuchos_ParameterList.hpp>

#include <string>
#include <vector>

#include "gemm/algorithm.hpp"
#include "sim/fc_layers.hpp"
#include "sim/sweep.hpp"

namespace meshslice::simapp {

struct SimSettings {
  std::string machine;  // name of a shipped description or a path
  std::vector<const sim::LlmSpec*> models;
  std::vector<sim::Scaling> scalings;
  std::vector<int> chips;
  std::vector<Algorithm> algorithms;
  bool all_meshes = false;  // sim.csv lists every mesh shape, not just each algorithm's best
  sim::SweepOptions sweep;
  sim::WorkloadOptions workload;
  int shape_study_chips = 0;        // Fig. 13: MeshSlice on every mesh of this many chips
  int slice_study_rows = 0;         // Fig. 14: MeshSlice at every S on this mesh
  int slice_study_cols = 0;
  int trace_chips = 0;              // Chrome traces of every best configuration at this count
  bool plots = true;
};

void add_sim_parameters(Teuchos::ParameterList& valid);
// Reads and checks the validated deck; UserErrors name the key and the fix.
SimSettings sim_settings_from(const Teuchos::ParameterList& deck);

}  // namespace meshslice::simapp
