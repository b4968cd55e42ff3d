#include "sim_settings.hpp"

#include <algorithm>

#include "core/deck.hpp"
#include "core/errors.hpp"

namespace meshslice::simapp {

namespace {

template <class T>
Teuchos::Array<T> array(std::vector<T> v) {
  return Teuchos::Array<T>(v.begin(), v.end());
}

}  // namespace

void add_sim_parameters(Teuchos::ParameterList& valid) {
  valid.set("machine", std::string("tpuv4"),
            "machine description: a name under hardware/machines/ (tpuv4) or a path to a .yaml");
  valid.set("models", array<std::string>({"gpt3", "megatron-nlg"}),
            "LLMs whose transformer-block FC layers are trained: gpt3 (hidden 12288, 96 heads), "
            "megatron-nlg (hidden 20480, 128 heads)");
  valid.set("scalings", array<std::string>({"weak", "strong"}),
            "scenarios: weak (batch = weak_batch_per_chip * chips), strong (batch = strong_batch)");
  valid.set("chips", array<int>({16, 32, 64, 128, 256}),
            "chip counts (the 2D torus sizes); up to 4096 and beyond");
  valid.set("algorithms",
            array<std::string>({"meshslice", "collective", "summa", "cannon", "wang", "1dtp", "fsdp"}),
            "algorithms: meshslice, collective, summa, cannon, wang, 1dtp, fsdp");
  set_choice(valid, "mesh_shapes", "best", {"best", "all"},
             "sim.csv rows: each algorithm at its best mesh shape (best), or at every mesh shape "
             "it supports (all; column best marks the chosen one)");
  valid.set("slices", array<int>({1, 2, 3, 4, 6, 8, 12, 16, 24, 32}),
            "slice counts S to try per GEMM (MeshSlice; SUMMA and Wang iterations; 1D TP and "
            "FSDP slices); each GEMM takes its best");
  valid.set("block", 8, "block size B of the blocked slicing (TPUs read 128x8 tiles)");
  valid.set("min_mesh_side", 2, "2D algorithms try meshes with at least this many rows and cols");
  valid.set("sequence", 2048, "tokens per sequence");
  valid.set("weak_batch_per_chip", 0.5, "weak scaling: sequences per chip (paper: chips / 2)");
  valid.set("strong_batch", 32, "strong scaling: sequences in the batch (paper: 32)");
  auto& studies = valid.sublist("studies", false, "the paper's Fig. 13 and 14 (weak scaling)");
  studies.set("shapes_chips", 256,
              "Fig. 13: MeshSlice on every mesh shape of this many chips, emulated and by the "
              "analytical cost model (0: off)");
  studies.set("slices_rows", 32, "Fig. 14: MeshSlice at every S on this mesh (0: off)");
  studies.set("slices_cols", 8, "Fig. 14: columns of that mesh");
  valid.set("trace_chips", 0,
            "write a Chrome trace (Perfetto) of every algorithm's best configuration at this "
            "chip count (0: none)");
  valid.set("plots", true, "write PNG plots like the paper's Figs. 9-14 (needs gnuplot)");
}

SimSettings sim_settings_from(const Teuchos::ParameterList& deck) {
  SimSettings s;
  s.machine = get_param<std::string>(deck, "machine");
  for (const auto& name : get_strings(deck, "models")) s.models.push_back(&sim::llm_by_name(name));
  for (const auto& name : get_strings(deck, "scalings")) {
    require(name == "weak" || name == "strong", "unknown entry '", name,
            "' in scalings; valid: weak, strong");
    s.scalings.push_back(name == "weak" ? sim::Scaling::weak : sim::Scaling::strong);
  }
  s.chips = get_ints(deck, "chips");
  for (int c : s.chips) require(c >= 1, "chips entries must be >= 1, got ", c);
  for (const auto& name : get_strings(deck, "algorithms")) s.algorithms.push_back(parse_algorithm(name));
  s.all_meshes = get_param<std::string>(deck, "mesh_shapes") == "all";
  s.sweep.slices = get_ints(deck, "slices");
  for (int S : s.sweep.slices) require(S >= 1, "slices entries must be >= 1, got ", S);
  s.sweep.block = get_param<int>(deck, "block");
  require(s.sweep.block >= 1, "block must be >= 1, got ", s.sweep.block);
  s.sweep.min_mesh_side = get_param<int>(deck, "min_mesh_side");
  require(s.sweep.min_mesh_side >= 1, "min_mesh_side must be >= 1, got ", s.sweep.min_mesh_side);
  s.workload.sequence = get_param<int>(deck, "sequence");
  s.workload.weak_batch_per_chip = get_param<double>(deck, "weak_batch_per_chip");
  s.workload.strong_batch = get_param<int>(deck, "strong_batch");
  require(s.workload.sequence >= 1 && s.workload.weak_batch_per_chip > 0 &&
              s.workload.strong_batch >= 1,
          "sequence, weak_batch_per_chip and strong_batch must be positive");
  s.shape_study_chips = get_param<int>(deck, "studies.shapes_chips");
  s.slice_study_rows = get_param<int>(deck, "studies.slices_rows");
  s.slice_study_cols = get_param<int>(deck, "studies.slices_cols");
  require(s.shape_study_chips >= 0 && s.slice_study_rows >= 0 && s.slice_study_cols >= 0,
          "studies.* must be >= 0 (0 turns a study off)");
  require((s.slice_study_rows == 0) == (s.slice_study_cols == 0),
          "studies.slices_rows and studies.slices_cols name one mesh: set both, or both to 0");
  s.trace_chips = get_param<int>(deck, "trace_chips");
  s.plots = get_param<bool>(deck, "plots");
  return s;
}

}  // namespace meshslice::simapp
