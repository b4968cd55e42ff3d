#include "sim_settings.hpp"

#include <algorithm>

#include "core/deck.hpp"
#include "core/errors.hpp"
#include "model/model_shape_parameters.hpp"

namespace meshslice::simapp {

namespace {

template <class T>
Teuchos::Array<T> array(std::vector<T> v) {
  return Teuchos::Array<T>(v.begin(), v.end());
}

}  // namespace

void add_sim_parameters(Teuchos::ParameterList& valid) {
  valid.set("machine", std::string("tpuv4-sim"),
            "machine description: a name under hardware/machines/ (tpuv4-sim, tpuv4-cloud) or a "
            "path to a .yaml");
  valid.set("models", array<std::string>({"gpt3", "megatron-nlg"}),
            "LLMs whose transformer-block FC layers are trained: gpt3 (hidden 12288, 96 heads), "
            "megatron-nlg (hidden 20480, 128 heads)");
  valid.set("scalings", array<std::string>({"weak", "strong"}),
            "scenarios: weak (batch = weak_batch_per_chip * chips), strong (batch = strong_batch)");
  valid.set("chips", array<int>({16, 32, 64, 128, 256}),
            "chip counts (the 2D torus sizes); up to 4096 and beyond");
  valid.set(
      "algorithms",
      array<std::string>({"meshslice", "collective", "summa", "cannon", "wang", "1dtp", "fsdp"}),
      "algorithms: meshslice, collective, summa, cannon, wang, 1dtp, fsdp");
  set_choice(valid, "mesh_shapes", "best", {"best", "all"},
             "sim.csv rows: each algorithm at its best mesh shape (best), or at every mesh shape "
             "it supports (all; column best marks the chosen one)");
  valid.set("slices", array<int>({1, 2, 3, 4, 6, 8, 12, 16, 24, 32}),
            "slice counts S to try per GEMM (MeshSlice; SUMMA and Wang iterations; 1D TP and "
            "FSDP slices); each GEMM takes its best");
  valid.set("block", 8, "block size B of the blocked slicing (TPUs read 128x8 tiles)");
  valid.set("wang_rings", array<std::string>({"col"}),
            "the rings whose collective Wang may decompose, each GEMM taking the faster: col (the "
            "MeshSlice authors' code, the paper's comparison) or col,row; the tables also report "
            "Wang with both");
  valid.set("min_mesh_side", 2, "2D algorithms try meshes with at least this many rows and cols");
  add_model_shape_parameters(valid.sublist("model", false, "The models' shape beyond their name."),
                             {{"seq_len", 2048, ""}});
  valid.set("weak_batch_per_chip", 0.5, "weak scaling: sequences per chip (paper: chips / 2)");
  valid.set("strong_batch", 32, "strong scaling: sequences in the batch (paper: 32)");
  auto& studies = valid.sublist("studies", false, "the paper's Fig. 13 and 14 (weak scaling)");
  studies.set("shapes_chips", 256,
              "Fig. 13: MeshSlice on every mesh shape of this many chips, emulated and by the "
              "analytical cost model (0: off)");
  studies.set("dataflow_chips", 256,
              "Table 2: MeshSlice with every layer Y-stationary against the tuned dataflows at "
              "this many chips (0: off)");
  studies.set("slices_rows", 32, "Fig. 14: MeshSlice at every S on this mesh (0: off)");
  studies.set("slices_cols", 8, "Fig. 14: columns of that mesh");
  valid.set("trace_chips", 0,
            "write a Chrome trace (Perfetto) of every algorithm's best configuration at this "
            "chip count, one of `chips` (0: none)");
  valid.set("plots", true, "write PNG plots like the paper's Figs. 9-14 (needs gnuplot)");
  auto& pipe = valid.sublist(
      "pipeline_sweep", false,
      "A training step of the model's blocks (FC layers, attention, norms, optimizer, dp "
      "reductions) with pipeline stages, by meshslice-train's data-free emulation: dp x pp x "
      "rows x cols = chips with the global batch fixed, 1F1B-style micro-batches of one "
      "sequence per mesh row. A pp needs pp MPI ranks (mpiexec -np <largest pp>); larger ones "
      "are skipped with a note. Writes OUT/sim_pipeline.csv.");
  pipe.set("pp", Teuchos::Array<int>(), "pipeline degrees (empty: no sweep)");
  set_choice(pipe, "model", "gpt3", {"gpt3", "megatron-nlg"}, "the LLM whose blocks are trained");
  pipe.set("chips", 256, "chips of the emulated machine");
  pipe.set("rows", 8, "mesh rows of each stage's tensor-parallel mesh");
  pipe.set("cols", 8, "mesh columns of it");
  pipe.set("blocks", 8, "transformer blocks (at least the largest pp)");
  pipe.set("global_sequences", 64, "sequences per step over all replicas (the global batch)");
  set_choice(pipe, "schedule", "1f1b", {"gpipe", "1f1b"}, "pipeline schedule");
  pipe.set("slices", 4, "S of every GEMM (MeshSlice, the paper's phase-1 dataflows)");
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
  for (const auto& name : get_strings(deck, "algorithms"))
    s.algorithms.push_back(parse_algorithm(name));
  s.all_meshes = get_param<std::string>(deck, "mesh_shapes") == "all";
  s.sweep.slices = get_ints(deck, "slices");
  for (int S : s.sweep.slices) require(S >= 1, "slices entries must be >= 1, got ", S);
  s.sweep.wang_rings.clear();
  for (const auto& name : get_strings(deck, "wang_rings")) {
    require(name == "col" || name == "row", "unknown entry '", name,
            "' in wang_rings; valid: col, row");
    s.sweep.wang_rings.push_back(name == "col" ? WangRing::col : WangRing::row);
  }
  require(!s.sweep.wang_rings.empty(), "wang_rings is empty; give col, row or both");
  s.sweep.block = get_param<int>(deck, "block");
  require(s.sweep.block >= 1, "block must be >= 1, got ", s.sweep.block);
  s.sweep.min_mesh_side = get_param<int>(deck, "min_mesh_side");
  require(s.sweep.min_mesh_side >= 1, "min_mesh_side must be >= 1, got ", s.sweep.min_mesh_side);
  s.workload.sequence = get_param<int>(deck, "model.seq_len");
  s.workload.weak_batch_per_chip = get_param<double>(deck, "weak_batch_per_chip");
  s.workload.strong_batch = get_param<int>(deck, "strong_batch");
  require(s.workload.sequence >= 1 && s.workload.weak_batch_per_chip > 0 &&
              s.workload.strong_batch >= 1,
          "model.seq_len, weak_batch_per_chip and strong_batch must be positive");
  s.shape_study_chips = get_param<int>(deck, "studies.shapes_chips");
  s.dataflow_study_chips = get_param<int>(deck, "studies.dataflow_chips");
  s.slice_study_rows = get_param<int>(deck, "studies.slices_rows");
  s.slice_study_cols = get_param<int>(deck, "studies.slices_cols");
  require(s.shape_study_chips >= 0 && s.dataflow_study_chips >= 0 && s.slice_study_rows >= 0 &&
              s.slice_study_cols >= 0,
          "studies.* must be >= 0 (0 turns a study off)");
  require((s.slice_study_rows == 0) == (s.slice_study_cols == 0),
          "studies.slices_rows and studies.slices_cols name one mesh: set both, or both to 0");
  s.trace_chips = get_param<int>(deck, "trace_chips");
  require(s.trace_chips == 0 ||
              std::find(s.chips.begin(), s.chips.end(), s.trace_chips) != s.chips.end(),
          "trace_chips = ", s.trace_chips,
          " is not one of the swept chip counts (chips); set it "
          "to one of them, or 0 for no traces");
  s.plots = get_param<bool>(deck, "plots");
  PipelineSweep& p = s.pipeline;
  p.pp = get_ints(deck, "pipeline_sweep.pp");
  p.model = &sim::llm_by_name(get_param<std::string>(deck, "pipeline_sweep.model"));
  p.chips = get_param<int>(deck, "pipeline_sweep.chips");
  p.rows = get_param<int>(deck, "pipeline_sweep.rows");
  p.cols = get_param<int>(deck, "pipeline_sweep.cols");
  p.blocks = get_param<int>(deck, "pipeline_sweep.blocks");
  p.global_sequences = get_param<int>(deck, "pipeline_sweep.global_sequences");
  p.slices = get_param<int>(deck, "pipeline_sweep.slices");
  p.schedule = parse_schedule(get_param<std::string>(deck, "pipeline_sweep.schedule"));
  require(p.chips >= 1 && p.rows >= 1 && p.cols >= 1 && p.blocks >= 1 && p.global_sequences >= 1 &&
              p.slices >= 1,
          "pipeline_sweep.chips, rows, cols, blocks, global_sequences and slices must be positive");
  for (const int pp : p.pp) {
    require(pp >= 1 && p.chips % (pp * p.rows * p.cols) == 0, "pipeline_sweep.pp holds ", pp,
            ": pipeline_sweep.chips = ", p.chips,
            " is not a multiple of pp x rows x cols = ", pp * p.rows * p.cols,
            "; choose degrees that divide the machine");
    const int dp = p.chips / (pp * p.rows * p.cols);
    require(p.global_sequences % (dp * p.rows) == 0, "pipeline_sweep.pp = ", pp,
            " leaves dp = ", dp, " replicas: the global batch of ", p.global_sequences,
            " sequences does not give each "
            "replica a multiple of the ",
            p.rows, " mesh rows; choose global_sequences divisible by ", dp * p.rows);
    require(pp <= p.blocks, "pipeline_sweep.pp = ", pp,
            " needs at least as many blocks; "
            "pipeline_sweep.blocks = ",
            p.blocks);
  }
  return s;
}

}  // namespace meshslice::simapp
