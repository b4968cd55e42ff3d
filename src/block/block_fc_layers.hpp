#pragma once
// The fully-connected layers of a transformer block, in the order they run: the one description
// of a block's GEMMs that meshslice-train's model (model/layer_plan.hpp), the simulator and the
// tuner (sim/fc_layers.hpp) read, as the block's modules declare them (block/block_module.hpp;
// the sizes in block/attention_layers.cpp and mlp_layers.cpp). Each is Y = X W on the block's
// tokens:
//   qkv       H -> 3H  Q, K and V together, from the norm of the residual stream (H + 2 KV with
//                      grouped-query attention: KV = kv_heads x head size)
//   attn_out  H -> H   the output projection, from attention's output
//   ff1       H -> F   the feed-forward network's first layer, from the norm: F outputs for GeLU;
//                      2F for a gated MLP (SwiGLU, GeGLU), its gate and up projections together
//   ff2       F -> H   its second, from FF1's output through the activation
//                      (block/mlp_activations.hpp: gelu(u), or act(gate) * up)
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "block/mlp_activations.hpp"
#include "gemm/fc_dataflow.hpp"

namespace meshslice {

// A block's FC layer by its number: the modules' FC layers in forward order, as their
// declarations add them (no list of the block's FC layers is kept anywhere else). A module
// names its own with its FC enum: block_fc(AttentionFc::qkv) (block/block_module.hpp).
enum class FcKind : int {};

// F of a deck's model.ffn_hidden (0: the default) and its key and value heads of model.kv_heads
// (0: one per head): the one rule the model, the emulator and the plan check read.
inline std::size_t ffn_of(std::size_t hidden, MlpKind mlp, std::size_t ffn_hidden) {
  return ffn_hidden > 0 ? ffn_hidden : default_ffn(hidden, mlp);
}
inline std::size_t kv_heads_of(std::size_t heads, std::size_t kv_heads) {
  return kv_heads > 0 ? kv_heads : heads;
}

// The sizes that fix a block's FC layers.
struct BlockDims {
  std::size_t hidden = 0;  // H
  std::size_t ffn = 0;     // F, the MLP's width
  MlpKind mlp = MlpKind::gelu;
  std::size_t kv_hidden = 0;  // K's and V's width: kv_heads x head size (0: H, one per head)
  std::size_t ff1_outputs() const { return mlp_gated(mlp) ? 2 * ffn : ffn; }
  std::size_t qkv_outputs() const { return hidden + 2 * (kv_hidden > 0 ? kv_hidden : hidden); }
};

struct BlockFcLayer {
  const char* name;  // "qkv", "attn_out", "ff1", "ff2"
  std::size_t in, out;
  // What the layer reads: a norm of the residual stream (standard layout), attention's output,
  // or the previous layer's output directly (its layout kept).
  enum class Input { norm, attention, previous } input;
  bool adds_to_residual = false;  // its output is added into the residual stream
  // The output's parts, each its own logical block of columns: Q, K and V; SwiGLU's gate and
  // up. All 0: one part.
  std::array<std::size_t, 3> output_parts{};
  FcKind kind{};           // its number in the block (FcLayerList::add sets it)
  std::size_t module = 0;  // the place of the module that adds it (FcLayerList::add sets it)
};

// The block's FC layers as its modules add theirs: a fixed array, so that reading the layers on
// a step's path (a layer's width) allocates nothing.
class FcLayerList {
 public:
  static constexpr std::size_t kCapacity = 8;
  // Adds a module's FC layer, numbered `fc` in the module (its FC enum): InternalError unless the
  // module adds its layers in that order, or past the capacity, or for a first layer that reads
  // the previous layer's output.
  template <class ModuleFc>
  void add(ModuleFc fc, const BlockFcLayer& layer) {
    add_numbered(static_cast<std::size_t>(fc), layer);
  }
  // The next layers are the next module's.
  void begin_module() {
    module_first_ = count_;
    ++modules_;
  }

  std::size_t size() const { return count_; }
  const BlockFcLayer& operator[](std::size_t k) const { return layers_[k]; }
  const BlockFcLayer& operator[](FcKind k) const { return layers_[static_cast<std::size_t>(k)]; }
  const BlockFcLayer* begin() const { return layers_.data(); }
  const BlockFcLayer* end() const { return layers_.data() + count_; }

 private:
  void add_numbered(std::size_t in_module, const BlockFcLayer& layer);
  std::array<BlockFcLayer, kCapacity> layers_{};
  std::size_t count_ = 0, module_first_ = 0;
  std::size_t modules_ = 0;  // begun so far (a list built without begin_module: one module)
};

// The block's layers, its modules' in order, and how many there are.
FcLayerList block_fc_layers(const BlockDims& dims);
std::size_t block_fc_count();
// Their names, "qkv, attn_out, ff1, ff2" (errors that list them).
std::string fc_layer_names();

// The elements of the layers' weights, sum of in x out (12 H^2 for GeLU at F = 4H): a block's
// FC parameters, and a third of its training step's GEMM FLOPs per token and multiply-add.
double block_fc_weights(const BlockDims& dims);

const char* fc_name(FcKind kind);
// A block layer by name; UserError listing the names (and a language model's kLmHeadName).
FcKind parse_fc_kind(const std::string& name);

// The layers as a chain for choose_dataflows: attention's output in QKV's layout when
// `attention_keeps_qkv_layout` (the paper's heuristic), else in the standard one (meshslice-train,
// whose attention keeps tokens over mesh rows and whole heads over mesh columns).
std::vector<FcShape> block_chain(const FcLayerList& layers, bool attention_keeps_qkv_layout);

}  // namespace meshslice
