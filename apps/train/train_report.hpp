#pragma once
// What meshslice-train prints before step 1, in the real run and the data-free emulation alike:
// the model and each layer's plan, the pipeline's split and schedule, the memory per rank.
#include "pipeline/stage_split.hpp"
#include "model/transformer.hpp"
#include "train_settings.hpp"

namespace meshslice::train {

double mib(double bytes);
void print_plan(const Settings& s, const ModelPlan& plan);
// The pipeline's split and schedule (nothing without stages, micro-batches, checkpointing or
// ZeRO-1).
void print_pipeline(const Settings& s, const StageSplit& split);
void print_memory(const MemoryUse& m);

}  // namespace meshslice::train
