#pragma once
// What a transformer block keeps for its backward pass, in elements per token: the one count
// that the pre-flight memory bound (model/model_config.cpp) and the tuner's memory estimate
// (tune/step_estimate.cpp) read, summed over the block's residual streams and its modules, each
// module's widths beside the Saved set it declares (model/modules/attention_module.hpp, mlp.hpp):
// a tensor a module adds to its set is added to its widths here. Attention's own (a log-sum-exp
// per query row and head, or the probabilities) depends on its kernel and is counted beside; the
// norms' value per row is left out.
#include "block/block_fc_layers.hpp"

namespace meshslice {

struct BlockSavedWidths {
  // In the run's element type.
  double kept = 0;
  // attn_out's input: attention's output itself where the plan keeps that layer's input in the
  // standard layout, else a tensor of its own (a lower bound leaves it out).
  double maybe_aliased = 0;
  // In bf16 in a bf16 run (the run's element type otherwise): GEMM inputs where their plans take
  // them so, and FC outputs that another kernel reads.
  double in_bf16 = 0;

  BlockSavedWidths& operator+=(const BlockSavedWidths& o) {
    kept += o.kept;
    maybe_aliased += o.maybe_aliased;
    in_bf16 += o.in_bf16;
    return *this;
  }
};

// The attention module's: its output (kept), attn_out's input, QKV's input and output (attention's
// input, K and V repeated per query head: 3H).
inline BlockSavedWidths attention_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden);
  return {h, h, h + 3 * h};
}

// The MLP module's: FF1's input (H) and output, FF2's input (F).
inline BlockSavedWidths mlp_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden), ffn = static_cast<double>(dims.ffn);
  return {0, 0, h + ffn + static_cast<double>(dims.ff1_outputs())};
}

// The block's: its input and the residual stream between its halves, and its modules'.
inline BlockSavedWidths block_saved_widths(const BlockDims& dims) {
  BlockSavedWidths w{2 * static_cast<double>(dims.hidden), 0, 0};
  w += attention_saved_widths(dims);
  w += mlp_saved_widths(dims);
  return w;
}

}  // namespace meshslice
