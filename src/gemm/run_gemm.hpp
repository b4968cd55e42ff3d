#pragma once
// One call for a GEMM run once: plans it (allocating its buffers) and runs it. Code that runs
// the same GEMM repeatedly keeps a GemmPlan (gemm/gemm_plan.hpp) instead.
#include "gemm/gemm_plan.hpp"

namespace meshslice {

// C = alpha op(A) op(B) + beta C with `algorithm`, each operand sharded as shard_region() says
// (A and B: GemmPlan::run's operands).
template <class Exec>
void run_gemm(Exec& ex, Algorithm algorithm, const GemmProblem& p, const typename Exec::Gathered& a,
              const typename Exec::Gathered& b, const typename Exec::Mat& c, const GemmOptions& o,
              double alpha = 1, double beta = 0) {
  GemmPlan<Exec>(ex, algorithm, p, o).run(a, b, c, alpha, beta);
}

}  // namespace meshslice
