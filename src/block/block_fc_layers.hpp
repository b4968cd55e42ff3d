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

// The block's FC layers by number: the modules' in forward order (block_fc_layers checks that
// they declare them so).
enum class FcKind { qkv = 0, attn_out = 1, ff1 = 2, ff2 = 3 };
constexpr int kFcKinds = 4;

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
  FcKind kind;
  const char* name;  // "qkv", "attn_out", "ff1", "ff2"
  std::size_t in, out;
  // What the layer reads: a norm of the residual stream (standard layout), attention's output,
  // or the previous layer's output directly (its layout kept).
  enum class Input { norm, attention, previous } input;
  bool adds_to_residual = false;  // its output is added into the residual stream
  // The output's parts, each its own logical block of columns: Q, K and V; SwiGLU's gate and
  // up. All 0: one part.
  std::array<std::size_t, 3> output_parts{};
};

// The block's layers, its modules' in order.
std::array<BlockFcLayer, kFcKinds> block_fc_layers(const BlockDims& dims);

// The elements of the layers' weights, sum of in x out (12 H^2 for GeLU at F = 4H): a block's
// FC parameters, and a third of its training step's GEMM FLOPs per token and multiply-add.
double block_fc_weights(const BlockDims& dims);

const char* fc_name(FcKind kind);
// A block layer by name; UserError listing the names (and a language model's kLmHeadName).
FcKind parse_fc_kind(const std::string& name);

// The layers as a chain for choose_dataflows: attention's output in QKV's layout when
// `attention_keeps_qkv_layout` (the paper's heuristic), else in the standard one (meshslice-train,
// whose attention keeps tokens over mesh rows and whole heads over mesh columns).
std::vector<FcShape> block_chain(const std::array<BlockFcLayer, kFcKinds>& layers,
                                 bool attention_keeps_qkv_layout);

}  // namespace meshslice
