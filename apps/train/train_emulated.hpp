#pragma once
// meshslice-train's hardware mode: the trainer over sim::CombinedExecutor, which runs every op
// for real and also times it on an emulated machine (instantiated once, in train_emulated.cpp);
// the emulated steps' bookkeeping is emulated_steps.hpp's.
#include "train_emulation/emulated_steps.hpp"
#include "gemm/real_executor.hpp"
#include "model/trainer.hpp"
#include "sim/combined_executor.hpp"

namespace meshslice {

extern template class Transformer<sim::CombinedExecutor<RealExecutor<float>>>;
extern template class Transformer<sim::CombinedExecutor<RealExecutor<double>>>;
extern template class Trainer<sim::CombinedExecutor<RealExecutor<float>>>;
extern template class Trainer<sim::CombinedExecutor<RealExecutor<double>>>;

}  // namespace meshslice
