#pragma once
// What a module of a transformer block declares (block/attention_layers.hpp, mlp_layers.hpp):
// its layers in forward order, each with the parameter it trains and whether its backward step
// reads what the forward pass saved; its FC layers (the GEMMs the plan, the emulator and the
// tuner see); the widths of what it keeps for the backward pass (the pre-flight memory bound's
// and the tuner's count); and what its other kernels cost (the emulator's). The module's steps run on the ranks (model/modules/); the
// block is the list of its modules (block_modules()), and everything the model, the simulator
// and the tuner read of a block is their concatenation: its layers and parameters
// (model/block_layers.hpp), its FC layers (block/block_fc_layers.hpp) and its saved widths.
#include <array>
#include <cstddef>
#include <vector>

#include "block/block_fc_layers.hpp"
#include "block/block_work.hpp"

namespace meshslice {

// A layer of a module. The parameter it trains, if any:
//   a gain      a norm's 1 x H gain: starts at 1, no weight decay, whole on every mesh row of
//               its columns (a copy per row); named blocks.<b>.<layer>.gain
//   a weight    FC layer `fc`'s in x out matrix, split over the mesh as the block's plan stores
//               it; drawn with std 1/sqrt(in), and 1/sqrt(2L) more when the layer adds into the
//               residual stream (GPT-2), so the stream's variance does not grow with depth;
//               weight decay; named blocks.<b>.<layer>.weight
struct ModuleLayer {
  enum class Trains { nothing, gain, weight };
  const char* name;
  bool reads_saved = false;  // whether its backward step reads a saved tensor
  Trains trains = Trains::nothing;
  int fc = 0;  // a weight's FC layer: its number in the module (the module's FC enum)
};

// What a block keeps for its backward pass, in elements per token. Attention's own (a
// log-sum-exp per query row and head, or the probabilities) depends on its kernel and is counted
// beside; the norms' value per row is left out.
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

struct BlockModuleSpec {
  const char* name;                 // "attention", "mlp"
  std::vector<ModuleLayer> layers;  // in forward order (the module's layer enum's)
  // Adds its FC layers in forward order, of a block of `dims` (to.add(AttentionFc::qkv, ...):
  // the module's FC enum numbers them; how many must not depend on `dims`).
  void (*add_fc_layers)(const BlockDims& dims, FcLayerList& to);
  // What its Saved set keeps (model/modules/: a tensor added there is added here).
  BlockSavedWidths (*saved_widths)(const BlockDims& dims);
  // Adds what its kernels outside the FC GEMMs cost on a chip's shard (block/block_work.hpp's
  // kernel_work: the figures its steps report to their executor).
  void (*add_non_fc_work)(const BlockShard& shard, BlockWork& to);
};

// The block's modules in forward order (model/modules/block_modules.hpp runs them in this order).
const std::vector<BlockModuleSpec>& block_modules();
// A module's place in block_modules(), by its name (InternalError for a module not in the list).
std::size_t module_place(const BlockModuleSpec& module);
// The block's number of module m's first FC layer.
std::size_t first_fc_layer(std::size_t module);
// The block's number of a module's FC layer, named by the module's FC enum (whose declaration
// says which module it is: module_declaring): block_fc(MlpFc::ff2).
template <class ModuleFc>
FcKind block_fc(ModuleFc fc) {
  return FcKind(first_fc_layer(module_place(module_declaring(fc))) + static_cast<std::size_t>(fc));
}

// What a block keeps: its input and the residual stream between its modules, and the modules'.
BlockSavedWidths block_saved_widths(const BlockDims& dims);
// A block's step on a chip outside its FC GEMMs: its modules' (the emulator's, sim/non_fc_work).
BlockWork block_non_fc_work(const BlockShard& shard);

}  // namespace meshslice
