#include "block/block_work.hpp"

#include <utility>

namespace meshslice {

void BlockWork::add(const LocalWork& forward_work, const LocalWork& backward_work) {
  for (auto [to, work] :
       {std::pair{&forward, &forward_work}, std::pair{&backward, &backward_work}}) {
    to->gemms.insert(to->gemms.end(), work->gemms.begin(), work->gemms.end());
    to->elements += work->elements;
  }
}

void add_norm_and_residual(BlockWork& work, double n) {
  using namespace kernel_work;
  work.add(rmsnorm_sums(n), rmsnorm_backward_partials(n));
  work.add(rmsnorm_apply(n), rmsnorm_backward_apply(n));
  work.add(residual(n, true), residual(n, false));
}

const char* attention_kernel_name(AttentionKernel kernel) {
  return kernel == AttentionKernel::fused ? "fused" : "blas_blocks";
}

bool parse_attention_kernel(const std::string& name, AttentionKernel& kernel) {
  for (AttentionKernel k : {AttentionKernel::fused, AttentionKernel::blas_blocks})
    if (name == attention_kernel_name(k)) {
      kernel = k;
      return true;
    }
  return false;
}

// What scripts/bench-train.sh measured faster: the fused kernels, on every backend. On a GPU,
// where every BLAS call is a launch, by far; on a CPU since their teams keep a pair's keys and
// values (forward) or queries (backward) in scratch and their micro-tiles fill AVX-512's
// registers: one rank's attention of a bench-h1024 block on the development VM's Sapphire
// Rapids took 54 ms against the BLAS blocks' 70 (104 before), and 128-154 ms a step on 2 ranks
// against 171-181, with 70 BLAS calls a step against 1,604 (2026-12-01); with AVX2's kernels 81
// against 82 ms. plan.attention: blas_blocks keeps the BLAS blocks.
AttentionKernel default_attention_kernel() { return AttentionKernel::fused; }

}  // namespace meshslice
