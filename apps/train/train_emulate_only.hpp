#pragma once
// meshslice-train's data-free emulation (train.emulate_only with hardware): the training step
// runs over sim::CombinedExecutor<sim::NullExecutor>, so every op of it is timed on the emulated
// machine and nothing runs for real: no data, no compute, no memory beyond the shapes. One MPI
// rank per pipeline stage stands for all of its stage's chips and replicas (they do the same
// work), so a GPT-3-sized step on a dp x pp x rows x cols mesh of hundreds of chips is emulated
// on a laptop. Prints the emulated step per step and writes OUT/train.csv and
// OUT/summary.json (no losses: there is no data).
#include "core/app.hpp"
#include "train_settings.hpp"

namespace meshslice::train {

int emulate_training(AppContext& context, const Settings& settings);

}  // namespace meshslice::train
