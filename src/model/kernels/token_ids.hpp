#pragma once
// Token ids on the device: a micro-batch's tokens or their targets (model/vocab_parallel.hpp).
#include "core/kokkos_types.hpp"

namespace meshslice {

using TokenIds = Kokkos::View<int*, MemSpace>;

}  // namespace meshslice
