#pragma once
// A transformer block as the list of its layers in forward order: its modules' (block/
// block_module.hpp: each declares its layers, the parameter each trains and whether its
// backward step reads what the forward pass saved) one after the other, the parameters numbered
// as they come (ParamKind: no list of the block's parameters is kept anywhere else). The
// distributed block (model/transformer.hpp) runs the list forward, each layer by its module
// (model/modules/), and backward in reverse, each layer starting its parameter's dp averaging
// as soon as the gradient is complete; the order in which every rank must start those
// reductions (model/parameter_update.hpp checks it) follows from the list, and so does how far
// a recomputation runs.
//
//     for (const BlockLayerSpec& l : block_layers()) ...                        // forward
//     for (auto l = block_layers().rbegin(); l != block_layers().rend(); ++l)  // backward
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "block/block_module.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// The parameter a layer trains (what it is: block/block_module.hpp's ModuleLayer).
struct BlockParam {
  ParamKind kind;  // the seeding's number for it (param_stream): fixed
  bool gain = false;
  FcKind fc{};  // a weight's FC layer
};

struct BlockLayerSpec {
  std::size_t module;  // the module that runs it: its place in block_modules()
  int layer;           // its place in the module's layers (the module's layer enum)
  const char* name;
  std::optional<BlockParam> param;  // the parameter it trains, if any
  bool reads_saved = false;         // whether its backward step reads a saved tensor
};

// The block's layers in forward order. Their parameters appear in ParamKind order, which the
// seeding fixes.
const std::vector<BlockLayerSpec>& block_layers();
// How many parameters a block has, and their numbers in order (0, 1, ...).
std::size_t block_param_count();
const std::vector<ParamKind>& block_param_kinds();
// The layer that trains parameter `kind`.
const BlockLayerSpec& layer_training(ParamKind kind);
// The block's parameter number of module m's first parameter (the modules' runs index their
// own from there: BlockParams::from).
std::size_t first_parameter(std::size_t module);
// The block's number of a module's parameter, named by the module's parameter enum (whose
// declaration says which module it is: module_declaring): block_param(MlpParam::ff1).
template <class ModuleParam>
ParamKind block_param(ModuleParam param) {
  return ParamKind(first_parameter(module_place(module_declaring(param))) +
                   static_cast<std::size_t>(param));
}

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
std::vector<ParamKind> gradient_order();

// How a module's forward pass uses the norm's staging buffer (BlockContext::normed): not at all;
// to stage a norm's output before its re-layout (it writes the buffer whatever it is offered);
// or to keep a tensor of its Saved set there when its saved set is offered the buffer (it
// writes it then only).
enum class NormedUse { none, stages, keeps_if_offered };
// Which modules, given how each uses it in forward order, a recomputation's saved set may offer
// the buffer: a module whose kept tensor no later module overwrites, by staging there or by
// keeping its own tensor there.
std::vector<bool> normed_offers(const std::vector<NormedUse>& uses);

}  // namespace meshslice
