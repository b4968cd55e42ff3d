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

// What scripts/bench-train.sh measured faster on each kind of backend. On a CPU the BLAS blocks:
// their thousands of BLAS calls cost a CPU little, and OpenBLAS multiplies faster than the fused
// kernels' tile products (bench-h1024 on 2 ranks, 2026-11-27: 2,632 ms a step against 2,851).
// On a GPU, where every call is a launch, the fused kernels.
AttentionKernel default_attention_kernel() {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  return AttentionKernel::fused;
#else
  return AttentionKernel::blas_blocks;
#endif
}

}  // namespace meshslice
