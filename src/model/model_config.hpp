#pragma once
// What a training run is, independent of how it is distributed: the transformer's shape, the
// synthetic task's seeds (data/task_seeds.hpp) and the optimizer. The serial reference and the distributed model both
// take these, and everything they initialise is a function of (seed, tensor, logical row,
// logical column) only (model/counter_random.hpp), so every mesh trains the same model.
//
// The model: L pre-norm blocks, each
//   h = RMSNorm(x) * g1;  [q k v] = h Wqkv;  a = causal multi-head attention(q, k, v);
//   x = x + a Wo;  h = RMSNorm(x) * g2;  x = x + MLP(h)
// with MLP(h) = GeLU(h W1) W2, or with a gated `mlp` (block/mlp_activations.hpp: swiglu, Llama's;
// geglu) (act(h W1g) * (h W1u)) W2, the gate and up projections one FF1 weight [W1g | W1u] of 2F
// columns; no biases. With `kv_heads`
// below `heads` (grouped-query attention), k and v have kv_heads heads, query head h using k and
// v head h / (heads / kv_heads). With `rope`, q and k are rotated by their token's position in
// its sequence first (RoPE: in each head, dimensions d and d + dim/2 turn by position *
// kRopeBase^(-2d/dim)).
// The synthetic task: a fixed random teacher of the same shape maps random inputs to targets;
// the loss is the mean squared error over every element of the output. A language model
// (vocab > 0) embeds tokens before the blocks and predicts the next token after them
// (model/reference_lm.hpp has its formulas).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "block/block_fc_layers.hpp"
#include "block/block_work.hpp"
#include "data/task_seeds.hpp"
#include "parameters/optimizers/optimizer_settings.hpp"
#include "parameters/parameter_layout.hpp"

namespace meshslice {

struct ModelShape {
  std::size_t hidden = 64;  // H
  std::size_t heads = 4;    // heads x head_dim = H
  // Grouped-query attention: heads / kv_heads query heads share each key and value head
  // (Ainslie et al. 2023); 0: kv_heads = heads, multi-head attention.
  std::size_t kv_heads = 0;
  std::size_t blocks = 2;     // L
  std::size_t seq_len = 16;   // tokens per sequence
  std::size_t sequences = 4;  // sequences per data-parallel replica and step
  bool rope = false;          // rotary position embeddings in attention
  // A language model (vocab > 0): token embedding -> blocks -> RMSNorm -> LM head -> logits
  // over the vocabulary; the head is its own H x V matrix or, tied, the embedding transposed.
  std::size_t vocab = 0;
  bool tied_head = false;
  MlpKind mlp = MlpKind::gelu;
  std::size_t ffn_hidden = 0;  // F, the MLP's width; 0: default_ffn (4H for GeLU)
  std::size_t ffn() const { return ffn_of(hidden, mlp, ffn_hidden); }
  std::size_t kv() const { return kv_heads_of(heads, kv_heads); }
  std::size_t kv_hidden() const { return kv() * head_dim(); }
  BlockDims dims() const { return {hidden, ffn(), mlp, kv_hidden()}; }
  std::size_t head_dim() const { return hidden / heads; }
  std::size_t tokens() const { return sequences * seq_len; }  // T per replica and step
};

constexpr double kRmsNormEpsilon = 1e-6;
constexpr double kRopeBase = 10000.0;  // RoPE's wavelength base (LLaMA's, GPT-NeoX's)

// A parameter of one block by its number: the block's modules' parameters in forward order, as
// their declarations list them (model/block_layers.hpp numbers them so; a module names its own
// with its parameter enum, block_param(AttentionParam::qkv)). The numbers seed the parameters
// (param_stream) and order the checkpoint's tensors, so a module's parameters keep their places.
enum class ParamKind : int {};

// A language model's parameters outside the blocks (model/reference_lm.hpp has the formulas):
// the embedding table (V x H), the final norm's gain (1 x H) and the head (H x V; none tied).
enum class LmParam { embedding = 0, final_norm_gain = 1, lm_head = 2 };
const char* lm_parameter_name(LmParam param);  // "embedding.weight", "final_norm.gain", ...
ParamShape lm_param_shape(const ModelShape& shape, LmParam param);
// The id that seeds it: after every block's (param_stream), whatever the depth.
constexpr std::uint64_t lm_param_stream(LmParam param) {
  return (std::uint64_t{1} << 32) + static_cast<std::uint64_t>(param);
}
// Its initial values' standard deviation: the embedding 1 (the first norm scales it), the head
// 1/sqrt(H) (logits of unit variance from a normed input); 0 marks the gain (it starts at 1).
double lm_param_std(const ModelShape& shape, LmParam param);

// The model's parameters in one order, the same on every rank: a language model's embedding,
// then the blocks' (block by block, in ParamKind order), then its final gain and head.
std::size_t model_parameter_order(std::size_t block, ParamKind kind);
std::size_t model_parameter_order(const ModelShape& shape, LmParam param);
// The name of the parameter at `order` (checkpoints', reports').
std::string model_parameter_name(const ModelShape& shape, std::size_t order);
// Every parameter's name and logical shape in that order: what a checkpoint file holds.
std::vector<std::pair<std::string, ParamShape>> model_tensors(const ModelShape& shape);

// The id that seeds parameter `kind` of block `block`: eight numbers per block (block_layers()
// checks that the modules declare at most eight).
constexpr std::uint64_t param_stream(std::size_t block, ParamKind kind) {
  return 8 * static_cast<std::uint64_t>(block) + static_cast<std::uint64_t>(kind);
}

// The dense GEMM FLOPs of one block's training step on a replica's batch: the FC layers'
// 72 T H^2 (forward and both backward GEMMs) and attention's q k^T and p v, 12 B S^2 H.
double block_flops(const ModelShape& shape);

// Bytes a rank of a `chips`-chip tensor-parallel mesh certainly needs to train `shape` with
// scalars of `scalar_bytes`: the student's weights, gradients and optimizer state, the
// teacher's weights, and the activations the backward pass keeps (attention's: the BLAS
// blocks' probabilities at the causal half, the fused kernels' log-sum-exps; in a bf16 run
// the FC layers' inputs at 2 bytes, as the plans may keep them, and QKV's and FF1's outputs). A
// lower bound (work buffers and workspaces come on top) for the up-front memory check, computed before anything is
// allocated.
double minimum_memory_bytes(const ModelShape& shape, std::size_t chips, OptimizerKind optimizer,
                            std::size_t scalar_bytes, AttentionKernel attention, bool bf16);

}  // namespace meshslice
