#include "model/transformer_impl.hpp"

namespace meshslice {

template class Transformer<RealExecutor<float>>;
template class Transformer<RealExecutor<double>>;

}  // namespace meshslice
