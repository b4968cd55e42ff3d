#include "train_emulated.hpp"

#include "model/trainer_impl.hpp"
#include "model/transformer_impl.hpp"

namespace meshslice {

template class Transformer<sim::CombinedExecutor<RealExecutor<float>>>;
template class Transformer<sim::CombinedExecutor<RealExecutor<double>>>;
template class Trainer<sim::CombinedExecutor<RealExecutor<float>>>;
template class Trainer<sim::CombinedExecutor<RealExecutor<double>>>;

}  // namespace meshslice
