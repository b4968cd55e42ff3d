#pragma once
// The data-free emulation of training steps: the trainer over
// sim::CombinedExecutor<sim::NullExecutor>, every op timed on the emulated machine and nothing
// run for real, one MPI rank per pipeline stage standing for its stage's chips and replicas
// (exec/null_executor.hpp). meshslice-train's train.emulate_only and meshslice-sim's pipeline
// sweep both run it.
#include <cstddef>
#include <functional>
#include <set>

#include "hardware/model.hpp"
#include "mesh/torus.hpp"
#include "model/layer_plan.hpp"
#include "model/model_config.hpp"
#include "model/step_settings.hpp"
#include "model/transformer.hpp"
#include "pipeline/stage_split.hpp"
#include "train_emulation/emulated_steps.hpp"

namespace meshslice::train {

struct DataFreeRun {
  MeshShape mesh;  // the emulated machine's
  ModelShape model;
  ModelPlan plan;
  OptimizerSettings optimizer;
  StepSettings step;  // its flop_rate is set to the machine's
  std::size_t steps = 2;
  std::set<std::size_t> trace_steps;  // kept by `emulated` for its trace
  bool double_precision = false;
  // train.precision bf16: the model keeps in bf16 what a bf16 run keeps (its memory per chip is
  // that run's; the emulated chip's element size is the machine's).
  bool bf16 = false;
  // Called on every rank: before step 1 with the split and the memory per chip, after each step.
  std::function<void(const StageSplit&, const MemoryUse&)> before_first_step;
  std::function<void(std::size_t, const EmulatedSteps::Step&)> after_step;
};

// Collective over `stages` (one rank per pipeline stage of run.mesh); `emulated` keeps the steps.
void emulate_without_data(const Torus& stages, const hw::MachineModel& machine,
                          const DataFreeRun& run, EmulatedSteps& emulated);

}  // namespace meshslice::train
