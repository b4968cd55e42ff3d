#pragma once
// A transformer block (model/model_config.hpp has its formulas) as the list of its layers in
// forward order, each declaring the parameter it trains and the activations its backward step
// reads. The distributed block (model/transformer.hpp) runs the list forward, and backward in
// reverse, each layer starting its parameter's dp averaging as soon as the gradient is complete;
// the order in which every rank must start those reductions (model/parameter_update.hpp checks
// it) follows from the list, and so does how far a recomputation runs.
//
//     for (const BlockLayerSpec& l : block_layers()) ...                        // forward
//     for (auto l = block_layers().rbegin(); l != block_layers().rend(); ++l)  // backward
#include <array>
#include <cstddef>
#include <vector>

#include "model/model_config.hpp"

namespace meshslice {

// What a block keeps of a forward pass for its backward pass.
enum class Activation {
  x_in,         // the block's input (the residual stream)
  rinv1,        // the first norm's reciprocal RMS per token
  qkv_in,       // the QKV projection's input, in its layout
  qkv,          // its output (standard)
  probs,        // attention's probabilities
  attn,         // attention's output (standard)
  attn_out_in,  // the output projection's input, in its layout
  x_mid,        // the residual stream between the halves
  rinv2,        // the second norm's
  ff1_in,       // FF1's input, in its layout
  ff1_out,      // FF1's output (the activation's input), in FF1's output layout
  ff2_in,       // the activation's output in FF2's input layout
};

enum class BlockLayer {
  norm1,
  qkv,
  attention,
  attn_out,
  attn_residual,
  norm2,
  ff1,
  activation,  // the MLP's: GeLU or SwiGLU (model/modules/mlp.hpp)
  ff2,
  ff_residual
};

struct BlockLayerSpec {
  BlockLayer layer;
  const char* name;
  bool trains;  // whether it has a parameter, `param`
  ParamKind param;
  std::vector<Activation> saves;
};

// The block's layers in forward order. Their parameters appear in ParamKind order, which the
// seeding fixes.
const std::vector<BlockLayerSpec>& block_layers();

// How many layers, from the first, a recomputation runs: up to the last layer that saves
// anything, whose saved input the layer before it makes (its own output is not needed).
std::size_t recomputed_layers();

// The block's parameters in the order the backward pass completes their gradients.
std::array<ParamKind, kParamKinds> gradient_order();

}  // namespace meshslice
