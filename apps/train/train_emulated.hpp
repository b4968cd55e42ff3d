#pragma once
// meshslice-train's hardware mode: the trainer over sim::CombinedExecutor, which runs every op
// for real and also times it on an emulated machine (instantiated once, in train_emulated.cpp);
// the emulated steps' bookkeeping is emulated_steps.hpp's.
#include "exec/combined_executor.hpp"
#include "exec/real_executor.hpp"
#include "model/trainer.hpp"
#include "train_emulation/emulated_steps.hpp"

namespace meshslice {

extern template class Transformer<sim::CombinedExecutor<RealExecutor<float>>>;
extern template class Transformer<sim::CombinedExecutor<RealExecutor<double>>>;
extern template class Trainer<sim::CombinedExecutor<RealExecutor<float>>>;
extern template class Trainer<sim::CombinedExecutor<RealExecutor<double>>>;

}  // namespace meshslice
