#pragma once
// How each FC layer of a transformer block runs (the same for every block: they have the same
// shapes): its row of Table 1, whether the transposed variant is used, and the algorithm and
// slicing of each of its three GEMMs. The layouts follow from that:
//
//   activation layouts   standard:    tokens split over mesh rows, hidden over mesh columns
//                        transposed:  the transpose (hidden over rows, tokens over columns)
//   Y-stn, X-stn         input and output standard (both transposed in the transposed variant)
//   W-stn                input transposed, output standard (the transposed variant: input
//                        standard, output transposed)
//   weight kept as       W for Y- and W-stn, W^T for X-stn; the other in the transposed variant
//
// Everything else in a block (RMSNorm, attention, residual adds) works in the standard layout,
// and the MLP's activation in whatever layout FF1 produces; where a layer's input or output
// layout differs from its neighbour's, the driver re-lays the activation out (a distributed
// transpose) and counts it.
// A language model's head (lm_head, H -> V) reads the final norm and gives the cross-entropy its
// logits, both standard: it is Y- or X-stationary, never transposed, and X when tied (it then
// shares the embedding's table, kept as W^T).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "block/block_fc_layers.hpp"
#include "block/block_work.hpp"
#include "gemm/fc_dataflow.hpp"
#include "model/fc_layer.hpp"
#include "model/model_config.hpp"

namespace meshslice {

enum class Layout { standard, transposed };
const char* layout_name(Layout layout);  // "tokens/row hidden/col" or "hidden/row tokens/col"

// The block's layers (FcKind, fc_name, their shapes): block/block_fc_layers.hpp.
std::size_t fc_inputs(const ModelShape& shape, FcKind kind);
std::size_t fc_outputs(const ModelShape& shape, FcKind kind);

struct FcPlan {
  Stationary stationary = Stationary::Y;
  bool transposed = false;
  std::array<GemmChoice, 3> gemms{};  // indexed by Pass

  Layout input() const;
  Layout output() const;
  bool weight_transposed() const;
  std::string str() const;  // "Y-stn fwd meshslice S=2 B=1, ..."
};

// How a model's FC layers run: each block's (the same in every block; block_fc_layers), and a
// language model's head.
struct ModelPlan {
  std::vector<FcPlan> blocks = std::vector<FcPlan>(block_fc_count());
  std::optional<FcPlan> lm_head;  // a language model's (model.vocab > 0), none otherwise
  AttentionKernel attention = default_attention_kernel();  // how each chip computes attention

  FcPlan& operator[](std::size_t k) { return blocks[k]; }
  const FcPlan& operator[](std::size_t k) const { return blocks[k]; }
  FcPlan& operator[](FcKind k) { return blocks[static_cast<std::size_t>(k)]; }
  const FcPlan& operator[](FcKind k) const { return blocks[static_cast<std::size_t>(k)]; }
};

// Attention on a chip of ex's mesh: its whole sequences (tokens over the mesh rows), whole heads
// (over the columns) and the plan's kernel.
template <class Exec>
AttentionShape chip_attention(const Exec& ex, const ModelShape& s, const ModelPlan& plan) {
  return {s.sequences / ex.mesh_rows(),
          s.seq_len,
          s.heads / ex.mesh_cols(),
          s.head_dim(),
          s.rope,
          plan.attention};
}

// The paper's phase-1 rule for T tokens per replica: the largest of X, W and Y stays stationary,
// and the transposed variant is used when that saves a re-layout of the layer's input (FF2's
// input is FF1's output, in whatever layout FF1 gives it). A language model's head takes the
// larger of X and Y (X when tied). Every GEMM runs `choice`.
ModelPlan default_model_plan(const ModelShape& shape, const GemmChoice& choice);

// UserError unless a model of `shape` can run `plan`'s head: one exactly when it has a vocabulary,
// Y- or X-stationary, not transposed, X when tied.
void check_lm_head_plan(const ModelShape& shape, const ModelPlan& plan);

// One layer of an explicit plan, as a deck writes it:
//     LAYER STATIONARY ALGORITHM [S=<slices>] [B=<block>]
// e.g. "ff1 W meshslice S=4", "qkv Yt summa S=2" (a trailing t: the transposed variant). S and B
// hold for the three passes, or are given per pass as fwd/bwd_data/bwd_weight:
// "ff2 X meshslice S=4/1/8 B=8/1/8". The algorithm holds for the layer's three GEMMs. A
// malformed entry, an unknown layer, row of Table 1 or algorithm is a UserError quoting the entry.
// Returns the layer's name: a block's layer (fc_name) or kLmHeadName.
std::string parse_fc_plan(const std::string& entry, FcPlan& plan);

// The entry parse_fc_plan reads back to `plan` (every pass runs the first pass's algorithm).
std::string plan_entry(const std::string& layer, const FcPlan& plan);

// A model plan from explicit entries: every layer of a block exactly once, and lm_head once when
// the model has a vocabulary (checked as check_lm_head_plan does).
ModelPlan parse_model_plan(const std::vector<std::string>& entries, const ModelShape& shape);

}  // namespace meshslice
