#pragma once
// The fully-connected layers of one transformer block as distributed GEMMs (MeshSlice paper
// §3.2.1, §4.4, Table 1): which matrix stays in place, whether the layer runs transposed, and
// the forward, backward-data and backward-weight GEMMs that follow.
//
// A block has its modules' FC layers Y = X W on T = batch * sequence tokens, as
// block/block_fc_layers.hpp describes them for meshslice-train's model too: the attention's
// input projection (h -> 3h, Q, K and V together) and output projection (h -> h), and the MLP's
// two layers (h -> 4h -> h for the published models' GeLU; h -> 2F -> F -> h for SwiGLU).
//
// Dataflow (the paper's autotuner, phase 1): the largest of X (T x I), W (I x O) and
// Y (T x O) stays stationary, and the backward GEMMs take the same row of Table 1
// (gemm/fc_dataflow.hpp). Transposition: a W-stationary layer consumes its input transposed; rather than transposing
// the activations, the autotuner runs such a layer's transposed dataflow (all matrices
// transposed, OS -> OS, LS <-> RS, M <-> N), which consumes X as it is and yields Y^T. The flag
// propagates along the block: input projection, attention (keeps it), output projection; the
// residual add restores the untransposed layout; then the two feed-forward layers (the rule of
// the MeshSlice reference implementation's autotuner).
#include <cstddef>
#include <string>
#include <vector>

#include "block/block_fc_layers.hpp"
#include "gemm/fc_dataflow.hpp"
#include "gemm/gemm_problem.hpp"

namespace meshslice::sim {

struct LlmSpec {
  std::string name;        // "gpt3", "megatron-nlg"
  std::string label;       // "GPT-3 175B", for plots
  std::size_t hidden;      // h
  int heads;               // attention heads (h / heads is the head size)
  std::size_t blocks = 0;  // transformer blocks of the published model (0: not given)
  MlpKind mlp = MlpKind::gelu;
  std::size_t ffn = 0;       // the MLP's width (0: default_ffn)
  std::size_t kv_heads = 0;  // grouped-query attention's key and value heads (0: heads)
  std::size_t ffn_hidden() const { return ffn_of(hidden, mlp, ffn); }
  BlockDims dims() const {
    const std::size_t head_dim = hidden / static_cast<std::size_t>(heads);
    return {hidden, ffn_hidden(), mlp,
            kv_heads_of(static_cast<std::size_t>(heads), kv_heads) * head_dim};
  }
};

const LlmSpec& gpt3();          // hidden 12288, 96 heads, 96 blocks (Brown et al. 2020)
const LlmSpec& megatron_nlg();  // hidden 20480, 128 heads, 105 blocks (Smith et al. 2022)
// "gpt3" or "megatron-nlg"; anything else is a UserError listing both.
const LlmSpec& llm_by_name(const std::string& name);

using meshslice::Stationary;
using meshslice::stationary_name;

struct FcGemm {
  std::string layer;  // a block layer's name (fc_name) or kLmHeadName
  std::string pass;   // "fwd", "bwd_data", "bwd_weight"
  Stationary stationary;
  bool transposed;
  GemmProblem problem;
  double flops() const { return 2.0 * problem.M * problem.N * problem.K; }
  std::string label() const { return layer + "." + pass; }
};

// Where attention runs: in whatever layout the QKV projection gives it (the paper's heuristic:
// the output projection then reads QKV's layout), or always in the standard one (meshslice-train,
// whose attention keeps tokens over mesh rows and whole heads over mesh columns).
enum class AttentionLayout { follows_qkv, standard };

// The 12 GEMMs (4 layers x 3 passes) of one block's training step for T tokens.
std::vector<FcGemm> block_gemms(const LlmSpec& llm, std::size_t tokens,
                                AttentionLayout attention = AttentionLayout::follows_qkv);

// The 3 GEMMs of a language model's head (H -> V, the vocabulary as padded for the mesh) for T
// tokens, layer "lm_head": never transposed, the larger of X and Y stationary
// (choose_standard_stationary), as meshslice-train's default plan for an untied head.
std::vector<FcGemm> lm_head_gemms(std::size_t hidden, std::size_t vocab, std::size_t tokens);

// The same GEMMs without the dataflow optimization: every layer Y-stationary, nothing
// transposed (the default the paper's Table 2 compares against).
std::vector<FcGemm> y_stationary_block_gemms(const LlmSpec& llm, std::size_t tokens);

}  // namespace meshslice::sim
