// The executors that gemm/executor_interface.hpp's own files cannot check: the combined one over
// each real side it is used with, and the data-free real side. With RealExecutor and SimExecutor
// (checked in their headers) every executor is checked, so an op added to the interface and
// missed by one of them is a compile error naming the missing member.
#include "gemm/executor_interface.hpp"
#include "gemm/real_executor.hpp"
#include "sim/combined_executor.hpp"
#include "sim/null_executor.hpp"

namespace meshslice::sim {

static_assert(is_executor_v<NullExecutor<float>> && is_executor_v<NullExecutor<double>>);
static_assert(is_executor_v<CombinedExecutor<RealExecutor<float>>> &&
              is_executor_v<CombinedExecutor<RealExecutor<double>>>);
static_assert(is_executor_v<CombinedExecutor<NullExecutor<float>>> &&
              is_executor_v<CombinedExecutor<NullExecutor<double>>>);

}  // namespace meshslice::sim
