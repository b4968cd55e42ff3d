#pragma once
// What the non-GEMM-library work of a transformer block costs on one chip, as LocalWork
// (exec/caller_work.hpp): the training driver's kernels report these figures to its executor
// (model/modules/), and the emulator's end-to-end time of a block adds them, as the modules
// declare them (block/block_module.hpp), to the FC GEMMs (sim/non_fc_work.hpp), so both count
// the same work.
//
// Attention (model/kernels/attention.hpp) runs on a chip's `seqs` whole sequences of `len`
// tokens and `heads` whole heads of `dim`, with no communication. Causal rows: query row block
// I (rows [I b, I b + b)) only sees keys [0, end_I), end_I = min(len, (I + 1) b), so each
// (sequence, head) pair's products are GEMMs on row block I against the first end_I keys, about
// half the dense work; the probabilities p are kept per pair as those row blocks.
#include <Kokkos_Macros.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

#include "block/block_fc_layers.hpp"
#include "block/mlp_activations.hpp"
#include "exec/caller_work.hpp"

namespace meshslice {

// How a chip computes its attention: fused kernels that keep each row's log-sum-exp
// (model/kernels/fused_attention.hpp), or BLAS GEMMs on causal row blocks that keep the
// probabilities (model/kernels/attention.hpp). Both give the same results to rounding.
enum class AttentionKernel { fused, blas_blocks };
const char* attention_kernel_name(AttentionKernel kernel);  // "fused", "blas_blocks"
// The kernel named `name`; false if there is none of that name.
bool parse_attention_kernel(const std::string& name, AttentionKernel& kernel);
// The default of this build's backend: what scripts/bench-train.sh measured faster.
AttentionKernel default_attention_kernel();

struct AttentionShape {
  std::size_t seqs = 0, len = 0, heads = 0, dim = 0;
  bool rope = false;  // rotary position embeddings on q and k (model/kernels/attention.hpp)
  AttentionKernel kernel = AttentionKernel::blas_blocks;
  std::size_t pairs() const { return seqs * heads; }  // (sequence, head) pairs

  // Rows per causal block: eight blocks (56% of the dense work) of at least 32 rows, so each
  // GEMM stays large enough for BLAS to run near its peak.
  std::size_t block_rows() const { return std::min(len, std::max<std::size_t>(32, (len + 7) / 8)); }
  std::size_t blocks() const { return (len + block_rows() - 1) / block_rows(); }
  std::size_t block_end(std::size_t i) const { return std::min(len, (i + 1) * block_rows()); }
  // Offset of block i's first probability within its pair (blocks before i are all full).
  KOKKOS_INLINE_FUNCTION static std::size_t block_offset(std::size_t b, std::size_t i) {
    return b * b * i * (i + 1) / 2;
  }
  std::size_t pair_elements() const {
    const std::size_t last = blocks() - 1;
    return block_offset(block_rows(), last) + (len - last * block_rows()) * len;
  }
  // What the backward pass needs kept: the fused kernels' log-sum-exp of every query row, or
  // the blocks' probabilities.
  std::size_t saved_elements() const {
    return kernel == AttentionKernel::fused ? pairs() * len : pairs() * pair_elements();
  }

  // What LocalAttention's passes cost (exec/caller_work.hpp): their block GEMMs, and the
  // elements their packing, softmax and unpacking kernels read and write. The emulated chip
  // (a TPU) is timed on the BLAS blocks' work whichever kernel the real chip runs.
  LocalWork forward_work() const {
    LocalWork w;
    for (std::size_t i = 0; i < blocks(); ++i) {
      const std::size_t rows = block_end(i) - i * block_rows(), keys = block_end(i);
      w.gemms.push_back({pairs(), rows, keys, dim});  // scores = q k^T
      w.gemms.push_back({pairs(), rows, dim, keys});  // o = p v
    }
    // Pack q, k, v; rotate q and k in place (RoPE); the softmax over p in place; unpack o.
    w.elements = 6 * shard_elements() + (rope ? 4 * shard_elements() : 0) + 2.0 * saved_elements() +
                 2 * shard_elements();
    return w;
  }
  LocalWork backward_work() const {
    LocalWork w;
    for (std::size_t i = blocks(); i-- > 0;) {
      const std::size_t rows = block_end(i) - i * block_rows(), keys = block_end(i);
      const bool add = i + 1 < blocks();  // key rows gather from every later query block
      w.gemms.push_back({pairs(), keys, dim, rows, add});  // dv (+)= p^T do
      w.gemms.push_back({pairs(), rows, keys, dim});       // ds = do v^T
      w.gemms.push_back({pairs(), rows, dim, keys});       // dq = ds k
      w.gemms.push_back({pairs(), keys, dim, rows, add});  // dk (+)= ds^T q
    }
    // Pack q, k, v and da; rotate q and k, and dq and dk back (RoPE); the softmax gradient
    // (reads p, ds, da and a, writes ds); unpack dq, dk, dv.
    w.elements = 8 * shard_elements() + (rope ? 8 * shard_elements() : 0) + 3.0 * saved_elements() +
                 2 * shard_elements() + 6 * shard_elements();
    return w;
  }

 private:
  // Elements of one chip's attention output shard (a third of its q, k, v).
  double shard_elements() const { return static_cast<double>(seqs * len * heads * dim); }
};

// The element-wise kernels of a block (model/kernels), as the elements each reads plus writes
// for a shard of n elements.
namespace kernel_work {
inline LocalWork rmsnorm_sums(double n) { return LocalWork::streaming(n); }       // reads x
inline LocalWork rmsnorm_apply(double n) { return LocalWork::streaming(2 * n); }  // x -> h
// Reads dh and x; the row dot products and the gain's partial gradient are small.
inline LocalWork rmsnorm_backward_partials(double n) { return LocalWork::streaming(2 * n); }
// Reads dh, x (and rinv, gain: small), writes dx; adds a gain gradient of `gain` elements into
// the accumulated one when accumulating micro-batches.
inline LocalWork rmsnorm_backward_apply(double n, double gain = 0) {
  return LocalWork::streaming(4 * n + 3 * gain);
}
// out = x (a copy: reads and writes n), then out += delta (reads both, writes the sum).
inline LocalWork residual(double n, bool add) { return LocalWork::streaming(add ? 5 * n : 2 * n); }
// The MLP's activation on n outputs: z = act(u) reads u and writes z, its gradient reads dz and
// u and writes du; a gated one reads gate and up (2n) and writes z, its gradient reads gate, up
// and dz and writes d gate and d up.
inline LocalWork mlp_activation(MlpKind mlp, double n) {
  return LocalWork::streaming(mlp_gated(mlp) ? 3 * n : 2 * n);
}
inline LocalWork mlp_activation_backward(MlpKind mlp, double n) {
  return LocalWork::streaming(mlp_gated(mlp) ? 5 * n : 3 * n);
}
// Grouped-query attention's keys and values repeated per query head into `wide` elements, and
// their gradients summed back into `narrow` (model/kernels/grouped_query.hpp).
inline LocalWork repeat_kv(double wide) { return LocalWork::streaming(2 * wide); }
inline LocalWork sum_kv(double wide, double narrow) { return LocalWork::streaming(wide + narrow); }
}  // namespace kernel_work

// A chip's shard of a block, what the work outside its FC GEMMs depends on: attention on the
// chip; `tokens` and `hidden`, the chip's shard of the residual stream (tokens x hidden); the
// MLP's kind and `ffn`, the chip's elements of its hidden activations (FF2's input); `kv_hidden`
// the keys' width (below `hidden` with grouped-query attention: the keys and values repeated per
// query head, their gradients summed over each group).
struct BlockShard {
  AttentionShape attention;
  double tokens = 0, hidden = 0, ffn = 0;
  MlpKind mlp = MlpKind::gelu;
  double kv_hidden = 0;
};

// One block's step on a chip, outside its FC GEMMs: per pass, the kernels its modules run (each
// module declares its own: block/block_module.hpp's block_non_fc_work sums them).
struct BlockWork {
  LocalWork forward, backward;
  void add(const LocalWork& forward_work, const LocalWork& backward_work);
};

// A pre-norm residual module's own kernels on the residual stream's n elements: its RMSNorm and
// residual add forward; backward the norm's gradient and the residual path's copy.
void add_norm_and_residual(BlockWork& work, double n);

}  // namespace meshslice
