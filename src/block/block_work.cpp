#include "block/block_work.hpp"

namespace meshslice {

namespace {

void add(LocalWork& to, const LocalWork& work) {
  to.gemms.insert(to.gemms.end(), work.gemms.begin(), work.gemms.end());
  to.elements += work.elements;
}

}  // namespace

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

BlockWork block_non_fc_work(const AttentionShape& attention, double tokens, double hidden,
                            double ffn, MlpKind mlp, double kv_hidden) {
  using namespace kernel_work;
  const double n = tokens * hidden;
  BlockWork w;
  for (int norm = 0; norm < 2; ++norm) {
    add(w.forward, rmsnorm_sums(n));
    add(w.forward, rmsnorm_apply(n));
    add(w.forward, residual(n, true));
    add(w.backward, rmsnorm_backward_partials(n));
    add(w.backward, rmsnorm_backward_apply(n));
    add(w.backward, residual(n, false));
  }
  if (kv_hidden < hidden) {  // model/kernels/grouped_query.hpp
    const double wide = tokens * 3 * hidden, narrow = tokens * (hidden + 2 * kv_hidden);
    add(w.forward, repeat_kv(wide));
    add(w.backward, sum_kv(wide, narrow));
  }
  add(w.forward, attention.forward_work());
  add(w.forward, mlp_activation(mlp, ffn));
  add(w.backward, attention.backward_work());
  add(w.backward, mlp_activation_backward(mlp, ffn));
  return w;
}

}  // namespace meshslice
