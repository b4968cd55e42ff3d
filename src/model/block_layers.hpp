#pragma once
// A transformer block (model/model_config.hpp has its formulas) as the list of its layers in
// forward order, each declaring the parameter it trains (from which its name, shape, initial
// values, weight decay and split follow) and whether its backward step reads what the forward
// pass saved (the module that runs it declares what: model/modules/, its Saved set). The
// distributed block (model/transformer.hpp) runs the list forward, and backward in reverse,
// each layer starting its parameter's dp averaging as soon as the gradient is complete;
// the order in which every rank must start those reductions (model/parameter_update.hpp checks
// it) follows from the list, and so does how far a recomputation runs.
//
//     for (const BlockLayerSpec& l : block_layers()) ...                        // forward
//     for (auto l = block_layers().rbegin(); l != block_layers().rend(); ++l)  // backward
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.hpp"

namespace meshslice {

enum class BlockLayer {
  norm1,
  qkv,
  attention,
  attn_out,
  attn_residual,
  norm2,
  ff1,
  activation,  // the MLP's (block/mlp_activations.hpp, model/modules/mlp.hpp)
  ff2,
  ff_residual
};

// The parameter a layer trains, as the layer declares it (what it is follows from the kind):
//   a gain      a norm's 1 x H gain: starts at 1, no weight decay, whole on every mesh row of
//               its columns (a copy per row); named blocks.<b>.<layer>.gain
//   a weight    FC layer `fc`'s in x out matrix (block/block_fc_layers.hpp), split over the mesh
//               as the block's plan stores it; drawn with std 1/sqrt(in), and 1/sqrt(2L) more
//               when the layer adds into the residual stream (GPT-2), so the stream's variance
//               does not grow with depth; weight decay; named blocks.<b>.<layer>.weight
struct BlockParam {
  ParamKind kind;  // the seeding's number for it (param_stream): fixed
  bool gain = false;
  FcKind fc = FcKind::qkv;  // a weight's layer
};

struct BlockLayerSpec {
  BlockLayer layer;
  const char* name;
  std::optional<BlockParam> param;  // the parameter it trains, if any
  bool reads_saved = false;         // whether its backward step reads a saved tensor
};

// The block's layers in forward order. Their parameters appear in ParamKind order, which the
// seeding fixes.
const std::vector<BlockLayerSpec>& block_layers();
// The layer that trains parameter `kind`.
const BlockLayerSpec& layer_training(ParamKind kind);

// What a block parameter is, from its layer's declaration: its name in reports ("norm1_gain",
// "qkv"), in checkpoints ("blocks.3.ff1.weight", "blocks.3.norm1.gain": PyTorch's style), its
// logical shape, whether it is a gain, and its initial values' standard deviation (0 for a gain,
// which starts at 1: model_math.hpp's init_value).
std::string param_kind_name(ParamKind kind);
std::string parameter_name(std::size_t block, ParamKind kind);
ParamShape param_shape(const ModelShape& shape, ParamKind kind);
bool is_gain(ParamKind kind);
double parameter_std(const ModelShape& shape, ParamKind kind);

// How many layers, from the first, a recomputation runs: up to the last layer whose backward
// step reads a saved tensor, whose saved input the layer before it makes (its own output is not
// needed).
std::size_t recomputed_layers();

// The block's parameters in the order the backward pass completes their gradients.
std::array<ParamKind, kParamKinds> gradient_order();

}  // namespace meshslice
