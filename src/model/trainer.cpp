#include "model/trainer_impl.hpp"

namespace meshslice {

template class Trainer<RealExecutor<float>>;
template class Trainer<RealExecutor<double>>;

}  // namespace meshslice
