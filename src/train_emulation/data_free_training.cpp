#include "train_emulation/data_free_training.hpp"

#include "exec/combined_executor.hpp"
#include "exec/null_executor.hpp"
#include "model/trainer_impl.hpp"
#include "model/transformer_impl.hpp"

namespace meshslice {

template class Transformer<sim::CombinedExecutor<sim::NullExecutor<float>>>;
template class Transformer<sim::CombinedExecutor<sim::NullExecutor<double>>>;
template class Trainer<sim::CombinedExecutor<sim::NullExecutor<float>>>;
template class Trainer<sim::CombinedExecutor<sim::NullExecutor<double>>>;

namespace train {
namespace {

template <class T>
void emulate(const Torus& stages, const hw::MachineModel& machine, const DataFreeRun& run,
             EmulatedSteps& emulated) {
  using Exec = sim::CombinedExecutor<sim::NullExecutor<T>>;
  sim::NullExecutor<T> null(stages, run.mesh);
  if (run.bf16) null.keep_operands_in_bf16();
  Exec ex(null, machine, emulated.events());
  emulated.attach(ex.emulated());
  StepSettings step = run.step;
  step.flop_rate = machine.machine.chip.utilization_peak_flops;  // the stage split's estimate
  Trainer<Exec> trainer(ex, run.model, run.plan, run.optimizer, TaskSeeds{}, step);
  if (run.before_first_step) run.before_first_step(trainer.split(), trainer.memory());
  for (std::size_t i = 1; i <= run.steps; ++i) {
    emulated.begin_step(stages.comm());
    trainer.step();
    ex.wait_all();
    const EmulatedSteps::Step e = emulated.end_step(stages.comm(), i, run.trace_steps.count(i) > 0);
    if (run.after_step) run.after_step(i, e);
  }
}

}  // namespace

void emulate_without_data(const Torus& stages, const hw::MachineModel& machine,
                          const DataFreeRun& run, EmulatedSteps& emulated) {
  if (run.double_precision)
    emulate<double>(stages, machine, run, emulated);
  else
    emulate<float>(stages, machine, run, emulated);
}

}  // namespace train
}  // namespace meshslice
