// The executors that the contracts' own files cannot check: the combined one over each real side
// it is used with, and the data-free real side, against the GEMM interface
// (exec/executor_interface.hpp) and the training-step contract (exec/training_executor.hpp).
// With RealExecutor and SimExecutor (checked in their headers) every executor is checked, so a
// member added to a contract and missed by one of them is a compile error naming it.
#include "exec/combined_executor.hpp"
#include "exec/executor_interface.hpp"
#include "exec/null_executor.hpp"
#include "exec/real_executor.hpp"
#include "exec/training_executor.hpp"

namespace meshslice::sim {

static_assert(is_executor_v<NullExecutor<float>> && is_executor_v<NullExecutor<double>>);
static_assert(is_executor_v<CombinedExecutor<RealExecutor<float>>> &&
              is_executor_v<CombinedExecutor<RealExecutor<double>>>);
static_assert(is_executor_v<CombinedExecutor<NullExecutor<float>>> &&
              is_executor_v<CombinedExecutor<NullExecutor<double>>>);
static_assert(is_training_executor_v<NullExecutor<float>> &&
              is_training_executor_v<NullExecutor<double>>);
static_assert(is_training_executor_v<CombinedExecutor<RealExecutor<float>>> &&
              is_training_executor_v<CombinedExecutor<RealExecutor<double>>>);
static_assert(is_training_executor_v<CombinedExecutor<NullExecutor<float>>> &&
              is_training_executor_v<CombinedExecutor<NullExecutor<double>>>);

// The emulating executor alone is not a training executor (the combined one gives it the
// caller's work as local_work and blocking_communication): the detectors can say no.
static_assert(!training_executor_detail::has_compute<SimExecutor>::value);

}  // namespace meshslice::sim
