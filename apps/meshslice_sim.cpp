// meshslice-sim: reproduces the MeshSlice paper's evaluation (ISCA 2025, §5) on an emulated
// TPUv4 torus. The very same GEMM algorithms as meshslice-bench run on the emulating executor
// (src/sim), which times every op with the hardware model (hardware/), so a laptop emulates
// 256- or 4096-chip clusters in about a second.
#include <chrono>

#include "core/app.hpp"
#include "core/deck.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "hardware/model.hpp"
#include "sim_plots.hpp"
#include "sim_report.hpp"
#include "sim_settings.hpp"
#include "sim/machine_loader.hpp"
#include "sim_sweep.hpp"

namespace {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-sim");
  meshslice::simapp::add_sim_parameters(valid);
  return valid;
}

}  // namespace

int main(int argc, char** argv) {
  meshslice::AppSpec spec{
      "meshslice-sim",
      "Emulates distributed training of the FC layers of transformer blocks (GPT-3, "
      "Megatron-NLG) on a torus of emulated chips (TPUv4 by default) with MeshSlice and the "
      "baselines, under weak and strong scaling, each algorithm at its best mesh shape and "
      "slice counts. Times are per chip for one block's forward and backward FC GEMMs. Writes "
      "OUT/sim.csv, OUT/sim_gemms.csv, OUT/sim_shapes.csv, OUT/sim_slices.csv, PNG plots like "
      "the paper's Figs. 9-14 (with gnuplot) and OUT/deck.yaml. Runs in one process.",
      "sim/paper.yaml", valid_parameters};
  return meshslice::run_app(argc, argv, spec, [](meshslice::AppContext& context) {
    using namespace meshslice;
    using namespace meshslice::simapp;
    // Every rank checks the input (a bad deck fails on all ranks alike); one process then
    // emulates the whole torus.
    const SimSettings settings = sim_settings_from(context.deck);
    const hw::MachineModel machine = sim::load_machine_model(settings.machine, "machine");
    if (context.rank != 0) return 0;
    log_info("emulating ", machine.machine.name, " (", machine.machine.source, ")");
    const SimResults results = run_simulations(machine, settings);
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
             results.sweep_seconds, " s (one core); studies ", results.study_seconds,
             " s; plots ", plot_seconds, " s");
    log_info("results in ", context.out_dir, "/sim.csv");
    return 0;
  });
}
