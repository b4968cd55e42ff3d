#include "train_emulate_only.hpp"

#include <sstream>

#include "core/csv.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"
#include "model/trainer_impl.hpp"
#include "model/transformer_impl.hpp"
#include "sim/null_executor.hpp"
#include "train_emulated.hpp"
#include "train_report.hpp"

namespace meshslice {

template class Transformer<sim::CombinedExecutor<sim::NullExecutor<float>>>;
template class Transformer<sim::CombinedExecutor<sim::NullExecutor<double>>>;
template class Trainer<sim::CombinedExecutor<sim::NullExecutor<float>>>;
template class Trainer<sim::CombinedExecutor<sim::NullExecutor<double>>>;

namespace train {
namespace {

template <class T>
int emulate(AppContext& context, const Settings& s) {
  // The MPI job: one rank per pipeline stage (NullExecutor checks it).
  Torus stages(MPI_COMM_WORLD, MeshShape{1, context.size, 1, 1});
  sim::NullExecutor<T> null(stages, s.mesh);
  const double tokens = static_cast<double>(s.model.tokens()) * s.mesh.dp;
  EmulatedSteps emulated(*s.machine, tokens);
  sim::CombinedExecutor<sim::NullExecutor<T>> ex(null, *s.machine, emulated.events());
  emulated.attach(ex.emulated());
  log_info("data-free emulation: every op of the step is timed on an emulated ",
           emulated.machine_name(), " (", s.machine->machine.source, "), nothing runs for real; ",
           "rank s stands for the ", s.mesh.dp * s.mesh.rows * s.mesh.cols,
           " chips of pipeline stage s (", s.mesh.str(), ", ", s.mesh.total(), " chips)");
  const BlockPlan plan = block_plan(s);
  print_plan(s, plan);
  StepSettings step = s.step;
  step.flop_rate = s.machine->machine.chip.utilization_peak_flops;  // the stage split's estimate
  Trainer<sim::CombinedExecutor<sim::NullExecutor<T>>> trainer(ex, s.model, plan, s.optimizer,
                                                               s.seeds, step);
  print_pipeline(s, trainer.split());
  print_memory(trainer.memory());
  const bool writer = context.rank == 0;
  std::unique_ptr<CsvWriter> csv;
  if (writer)
    csv = std::make_unique<CsvWriter>(
        context.out_dir + "/train.csv",
        std::vector<std::string>{"step", "emulated_seconds", "emulated_exposed_comm_fraction",
                                 "emulated_flop_utilization", "tokens_per_s"});
  for (std::size_t i = 1; i <= s.steps; ++i) {
    emulated.begin_step(stages.comm());
    trainer.step();
    ex.wait_all();
    const EmulatedSteps::Step e = emulated.end_step(stages.comm(), i, s.trace_steps.count(i) > 0);
    if (i == 1 || i == s.steps || i % s.log_every == 0)
      log_info("step ", i, "/", s.steps, emulated.progress(e), ", ", static_cast<long>(tokens / e.seconds),
               " tokens/s, ", 100 * e.flop_utilization, "% FLOP utilization");
    if (csv) csv->row(i, e.seconds, e.exposed_fraction, e.flop_utilization, tokens / e.seconds);
  }
  if (!s.trace_steps.empty()) {
    emulated.write_trace(context.out_dir + "/trace_emulated.json", stages.comm());
    log_info("the traced steps' emulated timeline: ", context.out_dir, "/trace_emulated.json");
  }
  if (csv) csv->finish();
  if (writer) {
    std::ostringstream json;
    json << "{\n  \"mesh\": \"" << s.mesh.str() << "\",\n  \"chips\": " << s.mesh.total()
         << ",\n  \"steps\": " << s.steps << ",\n  \"data_free\": true"
         << ",\n  \"memory_estimate_mib\": " << mib(trainer.memory().total())
         << ",\n  \"emulated\": " << emulated.json() << ",\n  \"build\": " << version_json()
         << "\n}\n";
    write_output_file(context.out_dir + "/summary.json", json.str());
  }
  return 0;
}

}  // namespace

int emulate_training(AppContext& context, const Settings& s) {
  require(s.machine != nullptr, "train.emulate_only needs an emulated machine: set hardware = "
          "tpuv4 (or a machine file)");
  return s.precision == "double" ? emulate<double>(context, s) : emulate<float>(context, s);
}

}  // namespace train
}  // namespace meshslice
