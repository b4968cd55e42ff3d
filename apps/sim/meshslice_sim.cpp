// meshslice-sim: reproduces the MeshSlice paper's evaluation (ISCA 2025, §5) on an emulated
// TPUv4 torus. The very same GEMM algorithms as meshslice-bench run on the emulating executor
// (src/sim), which times every op with the hardware model (hardware/), so a laptop emulates
// 256- or 4096-chip clusters in about a second.
#include <algorithm>
#include <chrono>

#include "core/app.hpp"
#include "core/deck.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "hardware/model.hpp"
#include "sim_pipeline.hpp"
#include "sim_plots.hpp"
#include "sim_report.hpp"
#include "sim_settings.hpp"
#include "sim/machine_loader.hpp"
#include "sim_sweep.hpp"

namespace {

using namespace meshslice;
using namespace meshslice::simapp;

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-sim");
  add_sim_parameters(valid);
  return valid;
}

// The whole torus, emulated in this one process.
int emulate(const AppContext& context, const SimSettings& settings,
            const hw::MachineModel& machine) {
  log_info("emulating ", machine.machine.name, " (", machine.machine.source, ")");
  const SimResults results = run_simulations(machine, settings);
  require(std::any_of(results.points.begin(), results.points.end(),
                      [](const Point& p) { return p.best_config() != nullptr; }),
          "nothing was emulated: at every chip count in `chips` no algorithm found a mesh whose "
          "sides divide the batch's tokens and the layers' sizes (at least min_mesh_side = ",
          settings.sweep.min_mesh_side,
          " per side); choose chip counts with more divisors or "
          "a larger batch");
  print_tables(results, settings, machine.machine);
  write_csv_files(results, settings, machine.machine, context.out_dir);
  write_traces(results, settings, machine, context.out_dir);
  const auto start = std::chrono::steady_clock::now();
  if (settings.plots)
    for (const auto& png : write_plots(results, settings, machine.machine, context.out_dir))
      log_info("plot: ", png);
  const double plot_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_info("sweep: ", results.points.size(), " algorithm/workload points in ",
           results.sweep_seconds, " s (one core); studies ", results.study_seconds, " s; plots ",
           plot_seconds, " s");
  log_info("results in ", context.out_dir, "/sim.csv");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const AppSpec spec{
      "meshslice-sim",
      "Emulates distributed training of the FC layers of transformer blocks (GPT-3, "
      "Megatron-NLG) on a torus of emulated chips (TPUv4 by default) with MeshSlice and the "
      "baselines, under weak and strong scaling, each algorithm at its best mesh shape and "
      "slice counts. Times are per chip for one block's forward and backward FC GEMMs, and "
      "end to end with the block's non-FC work. Writes OUT/sim.csv, OUT/sim_gemms.csv, "
      "OUT/sim_shapes.csv, OUT/sim_slices.csv, OUT/sim_dataflow.csv, PNG plots like the paper's "
      "Figs. 9-14 (with gnuplot) and OUT/deck.yaml; every output names the machine. Runs in one "
      "process; the optional "
      "pipeline sweep emulates whole training steps, one MPI rank per pipeline stage (OUT/"
      "sim_pipeline.csv).",
      "sim/paper.yaml",
      valid_parameters,
      {},
      {{"sequence", "model.seq_len", "the model's shape is spelt as in every app's deck"},
       {"pipeline_sweep.global_batch", "pipeline_sweep.global_sequences",
        "the global batch is spelt as meshslice-tune's model.global_sequences"}}};
  return run_app(argc, argv, spec, [](AppContext& context) {
    // Every rank checks the input (a bad deck fails on all ranks alike); rank 0 then emulates
    // the whole torus and every rank returns its status.
    const SimSettings settings = sim_settings_from(context.deck);
    const hw::MachineModel machine = sim::load_machine_model(settings.machine, "machine");
    const int status =
        run_on_rank_zero(context, [&] { return emulate(context, settings, machine); });
    // The pipeline sweep emulates a stage per rank: the whole job takes part.
    if (status != 0 || settings.pipeline.pp.empty()) return status;
    return run_pipeline_sweep(context, settings, machine);
  });
}
