#include "train_emulate_only.hpp"

#include <memory>
#include <sstream>

#include "core/csv.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"
#include "train_emulation/data_free_training.hpp"
#include "train_report.hpp"

namespace meshslice::train {

int emulate_training(AppContext& context, const Settings& s) {
  require(s.machine != nullptr, "train.emulate_only needs an emulated machine: set hardware = "
                                "tpuv4-sim (or a machine file)");
  // The MPI job: one rank per pipeline stage (sim::NullExecutor checks it).
  const Torus stages(MPI_COMM_WORLD, MeshShape{1, context.size, 1, 1});
  const double tokens = static_cast<double>(s.model.tokens()) * s.mesh.dp;
  EmulatedSteps emulated(*s.machine, tokens);
  log_info("data-free emulation: every op of the step is timed on an emulated ",
           emulated.machine_name(), " (", s.machine->machine.source, ") at ",
           s.machine->machine.chip.element_bytes, "-byte elements (train.precision ", s.precision,
           "), nothing runs for real; ", "rank s stands for the ",
           s.mesh.dp * s.mesh.rows * s.mesh.cols, " chips of pipeline stage s (", s.mesh.str(),
           ", ", s.mesh.total(), " chips)");
  DataFreeRun run{s.mesh,  s.model,       model_plan(s),           s.optimizer,           s.step,
                  s.steps, s.trace_steps, s.precision == "double", s.precision == "bf16", {},
                  {}};
  print_plan(s, run.plan);
  const bool writer = context.rank == 0;
  std::unique_ptr<CsvWriter> csv;
  double memory_mib = 0;
  run.before_first_step = [&](const StageSplit& split, const MemoryUse& memory) {
    print_pipeline(s, split);
    print_memory(memory);
    memory_mib = mib(static_cast<double>(memory.total()));
    if (writer)
      csv = std::make_unique<CsvWriter>(
          context.out_dir + "/train.csv",
          std::vector<std::string>{"step", "emulated_seconds", "emulated_exposed_comm_fraction",
                                   "emulated_flop_utilization", "tokens_per_s"});
  };
  run.after_step = [&](std::size_t i, const EmulatedSteps::Step& e) {
    if (i == 1 || i == s.steps || i % s.log_every == 0)
      log_info("step ", i, "/", s.steps, emulated.progress(e), ", ",
               static_cast<long>(tokens / e.seconds), " tokens/s, ", 100 * e.flop_utilization,
               "% FLOP utilization");
    if (csv) csv->row(i, e.seconds, e.exposed_fraction, e.flop_utilization, tokens / e.seconds);
  };
  emulate_without_data(stages, *s.machine, run, emulated);
  if (!s.trace_steps.empty()) {
    emulated.write_trace(context.out_dir + "/trace_emulated.json", stages.comm());
    log_info("the traced steps' emulated timeline: ", context.out_dir, "/trace_emulated.json");
  }
  if (csv) csv->finish();
  if (writer) {
    json::Value summary = json::Value::object();
    summary.set("mesh", s.mesh.str());
    summary.set("chips", s.mesh.total());
    summary.set("steps", s.steps);
    summary.set("data_free", true);
    summary.set("memory_estimate_mib", memory_mib);
    summary.set("emulated", emulated.json());
    summary.set("build", version_json());
    write_output_file(context.out_dir + "/summary.json", summary.dump(2) + "\n");
  }
  return 0;
}

}  // namespace meshslice::train
