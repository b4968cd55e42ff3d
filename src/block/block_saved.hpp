#pragma once
// What a transformer block keeps for its backward pass, in elements per token: the one count
// that the pre-flight memory bound (model/model_config.cpp) and the tuner's memory estimate
// (tune/step_estimate.cpp) read. The model's activation store (model/activation_store.hpp) holds
// these tensors; a tensor added there is added here. Attention's own (a log-sum-exp per query row
// and head, or the probabilities) depends on its kernel and is counted beside.
#include "block/block_fc_layers.hpp"

namespace meshslice {

struct BlockSavedWidths {
  // In the run's element type: the block's input, attention's output, the mid-block residual.
  double kept = 0;
  // attn_out's input: attention's output itself where the plan keeps that layer's input in the
  // standard layout, else a tensor of its own (a lower bound leaves it out).
  double maybe_aliased = 0;
  // In bf16 in a bf16 run (the run's element type otherwise): QKV's, FF1's and FF2's inputs
  // (where their plans take them so), QKV's output (attention's input, K and V repeated per query
  // head) and FF1's output.
  double in_bf16 = 0;
};

inline BlockSavedWidths block_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden), ffn = static_cast<double>(dims.ffn);
  BlockSavedWidths w;
  w.kept = 3 * h;
  w.maybe_aliased = h;
  // QKV's input and output (H + 3H), FF1's input (H), FF2's input (F), FF1's output.
  w.in_bf16 = 5 * h + ffn + static_cast<double>(dims.ff1_outputs());
  return w;
}

}  // namespace meshslice
