// meshslice-tune: the MeshSlice autotuner (paper §3.2). Mode tune: phase 1 picks each FC layer's
// dataflow (Table 1) and transposition, phase 2 the mesh shape and each GEMM's slice count from
// the analytical cost model of the machine description. Mode plan: the joint dp x pp x mesh
// planner. Both print their tables and write the plan meshslice-train runs (OUT/plan.yaml).
// Mode calibrate: the machine description of the MPI machine it runs on.
#include <chrono>
#include <optional>

#include "comm/comm_parameters.hpp"
#include "core/app.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/precision.hpp"
#include "core/version.hpp"
#include "model/layer_plan.hpp"
#include "sim/machine_loader.hpp"
#include "tune/block_tuner.hpp"
#include "tune/emulator_check.hpp"
#include "tune_report.hpp"
#include "tune_settings.hpp"

namespace {

using namespace meshslice;
using namespace meshslice::tuneapp;

// The deck's machine, its elements the width of the precision the plan is for.
hw::MachineModel planned_machine(const TuneSettings& s) {
  hw::MachineModel machine = sim::load_machine_model(s.machine, "machine");
  if (s.precision != "machine")
    machine = sim::at_element_bytes(machine, precision_element_bytes(s.precision));
  log_info("planned at ", machine.machine.chip.element_bytes, "-byte elements (precision ",
           s.precision, ")");
  return machine;
}

int tune_block(const AppContext& context, const TuneSettings& s) {
  const hw::MachineModel machine = planned_machine(s);
  const auto start = std::chrono::steady_clock::now();
  const tune::CostModel cost(machine, s.gemm_rate);
  const auto gemms = sim::block_gemms(s.llm, s.tokens(), s.attention);
  const tune::BlockTuning tuning = tune::tune_block(cost, gemms, s.chips, s.search);
  tuning.best_mesh();  // a UserError naming each mesh's problem when none is usable
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_info("machine ", machine.machine.name, " (", machine.machine.source, "): effective ",
           cost.flop_rate() / 1e12, " TFLOP/s per chip (cost model)");
  print_phase1(s, gemms);
  print_phase2(s, tuning, machine.machine);
  std::optional<tune::EmulatorCheck> check;
  if (s.validate) {
    check = tune::check_against_emulator(machine, tuning, gemms, s.search);
    print_validation(*check, tuning, machine.machine);
  }
  std::fflush(stdout);
  log_info("tuned in ", seconds, " s (", tuning.meshes.size(), " mesh shapes x ", gemms.size(),
           " GEMMs x ", s.search.slices.size(), " slice counts, one core)");
  write_tune_csv(context.out_dir + "/tune.csv", tuning, check ? &*check : nullptr);
  // A language model's plan takes the mesh fastest for all its blocks and its head together.
  tune::MeshChoice mesh = tuning.best_mesh();
  std::shared_ptr<const tune::MeshChoice> head;
  if (s.vocab > 0) {
    const tune::ModelMesh model = tune::fastest_model_mesh(cost, tuning, s.blocks, s.llm.hidden,
                                                           s.vocab, s.tokens(), s.search);
    require(model.mesh != nullptr, "no mesh runs every GEMM of the blocks and ", kLmHeadName, ": ",
            model.why);
    if (model.mesh->rows != mesh.rows)
      std::printf(
          "with the head, %zu blocks and %s run fastest on %dx%d (the blocks alone: %dx%d)\n",
          s.blocks, kLmHeadName, model.mesh->rows, model.mesh->cols, mesh.rows, mesh.cols);
    mesh = *model.mesh;
    head = model.head;
  }
  tune::TrainingConfig config;
  config.rows = mesh.rows;
  config.cols = mesh.cols;
  if (head) print_lm_head(s, config, s.tokens(), *head);
  write_plan(context.out_dir + "/plan.yaml", s, config, mesh, head.get(), machine.machine.name);
  log_info("results in ", context.out_dir, "/tune.csv; plan in ", context.out_dir, "/plan.yaml");
  return 0;
}

int plan_training(const AppContext& context, TuneSettings s) {
  const hw::MachineModel machine = planned_machine(s);
  if (s.planner.memory_bytes == 0) s.planner.memory_bytes = machine.machine.chip.hbm_capacity_bytes;
  // A plan for a run: its tensors as meshslice-train keeps them at that precision.
  if (s.precision != "machine") s.planner.tensor_bytes = tune::TensorBytes::of_run(s.precision);
  const tune::CostModel cost(machine, s.gemm_rate);
  const tune::TrainingModel model{s.llm,       s.blocks, s.seq_len,
                                  s.sequences, s.vocab,  optimizer_states_per_weight(s.optimizer)};
  const tune::PlanSearch search = tune::plan_training(cost, model, s.chips, s.planner);
  const tune::Candidate& best = search.best();  // a UserError naming the closest misses
  print_planner(s, search, s.chips, machine.machine);
  std::fflush(stdout);
  write_planner_csv(context.out_dir + "/planner.csv", search);
  if (best.head) print_lm_head(s, best.config, best.config.microbatch_tokens(model), *best.head);
  write_plan(context.out_dir + "/plan.yaml", s, best.config, *best.mesh, best.head.get(),
             machine.machine.name);
  log_info("results in ", context.out_dir, "/planner.csv; plan in ", context.out_dir, "/plan.yaml");
  return 0;
}

// Every rank times; rank 0 fits, prints and writes.
int calibrate(const AppContext& context, const TuneSettings& s) {
  const tune::Calibration calibration = tune::calibrate(s.calibration);
  const hw::MachineModel machine(tune::calibrated_machine(calibration, s.calibration_name));
  if (context.rank != 0) return 0;
  print_calibration(calibration, machine);
  std::fflush(stdout);
  write_calibration_csv(context.out_dir + "/calibration.csv", calibration, machine);
  write_output_file(context.out_dir + "/machine.yaml",
                    hw::machine_yaml(machine.machine,
                                     concat("Calibrated by meshslice-tune --set mode=calibrate on ",
                                            calibration.ranks, " MPI ranks (", version_line(),
                                            ").\nEvery ring uses one link set; bandwidths are "
                                            "measured whole-ring rates (ring_directions 1); the "
                                            "chip is one core whose peak is the best local GEMM "
                                            "measured. Errors of each fit: OUT/calibration.csv.")));
  log_info("machine description in ", context.out_dir,
           "/machine.yaml (use it as machine = "
           "that path in meshslice-tune or meshslice-sim); samples in ",
           context.out_dir, "/calibration.csv");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const AppSpec spec{
      "meshslice-tune",
      "The MeshSlice autotuner. mode tune: for the FC layers of a transformer block (GPT-3, "
      "Megatron-NLG or custom) on a torus of `chips` chips of a machine description, phase 1 "
      "chooses each layer's dataflow (the largest of X, W, Y stationary), transposition and "
      "tensor sharding; phase 2 chooses the mesh shape and each GEMM's slice count S from the "
      "analytical cost model (t_launch + (P-1)(t_sync + bytes/bw) per collective, each local "
      "GEMM at the chip's rate); validate: true also emulates the choice and the emulator's "
      "optimum. mode plan: the joint dp x pp x rows x cols planner with micro-batches, "
      "schedules, activation recomputation and ZeRO-1 under the memory per chip "
      "(OUT/planner.csv). Both "
      "write OUT/tune.csv or the ranking and OUT/plan.yaml (run it with meshslice-train --set "
      "plan=OUT/plan.yaml). mode calibrate (every MPI rank): times "
      "this machine's collectives and GEMMs and writes OUT/machine.yaml and "
      "OUT/calibration.csv. tune and plan run in one process.",
      "tune/gpt3-256.yaml",
      valid_parameters,
      {},
      {{"planner.checkpointing", "planner.recompute",
        "activation recomputation; 'checkpoint' means saved training state"},
       {"model.sequences", "model.global_sequences",
        "the tuner chooses dp, so it takes the global batch; model.sequences is "
        "meshslice-train's per replica"}}};
  return run_app(argc, argv, spec, [](AppContext& context) {
    const TuneSettings settings = tune_settings_from(context.deck);
    if (settings.mode == "calibrate") {  // the only mode that communicates
      FlightRecorder::instance().start(
          flight_settings_from(context.deck, context.out_dir, context.rank));
      return calibrate(context, settings);
    }
    return run_on_rank_zero(context, [&] {
      return settings.mode == "plan" ? plan_training(context, settings)
                                     : tune_block(context, settings);
    });
  });
}
