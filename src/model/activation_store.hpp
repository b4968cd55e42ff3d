#pragma once
// The activations the blocks of a rank keep from their forward passes for their backward passes
// (model/block_layers.hpp says which layer saves what; block/block_saved.hpp counts them for the
// memory bound and the tuner, and changes with them): a full set per block and activation slot
// (a micro-batch in flight), or for a checkpointed block its input alone, with one set shared by
// the checkpointed blocks that a recomputation fills again in the backward pass. The shared set
// keeps some inputs in the forward pass's staging buffers where the layouts allow (see
// add_recomputation()).
//
//     ActivationStore<Exec> store(ex, shape, plan, attention.saved_elements());
//     std::size_t id = store.add_block(/*checkpointed=*/false, slots);   // per block
//     store.add_recomputation(normed, output);              // when a block is checkpointed
//     SavedActivations<T> s = store.working_set(id, slot);  // what block `id` works in
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "comm/comm_scratch.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "exec/gemm_operand.hpp"
#include "model/layer_plan.hpp"
#include "model/model_buffer.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// What the backward pass needs of one block and micro-batch, each in the layout its consumer
// reads.
template <class T>
struct SavedActivations {
  Matrix<T> x_in, rinv1, a, ao_in, x_mid, rinv2;
  // Read only by their layer's forward and weight GEMMs, which multiply them in bf16 in a bf16
  // run: kept in bf16 there where their plans take them so (ActivationStore::keep_input_in_bf16).
  GemmOperand<T> qkv_in, ff1_in, ff2_in;
  // Attention's input (QKV's output, k and v repeated per query head) and FF1's output: in a bf16
  // run kept rounded to bf16 (outputs_kept_in_bf16, below), the values attention and
  // the activation take, as autocast's bf16 linear outputs (no GEMM reads them; the pair is
  // GemmOperand's: the rounded matrix and the memory it lives in).
  GemmOperand<T> qkv, u;
  Buffer<T> attention;  // what attention keeps: log-sum-exps or probabilities (AttentionShape)
};

// The rows and columns of a T x width activation shard in `layout` on ex's mesh (T: the model's
// tokens).
template <class Exec>
std::pair<std::size_t, std::size_t> activation_extents(const Exec& ex, std::size_t tokens,
                                                       Layout layout, std::size_t width) {
  const std::size_t pr = ex.mesh_rows(), pc = ex.mesh_cols();
  if (layout == Layout::standard) return {tokens / pr, width / pc};
  return {width / pr, tokens / pc};
}

// Such a shard, its bytes added to `use`.
template <class Exec>
Matrix<typename Exec::Scalar> activation_matrix(const Exec& ex, std::size_t tokens, Layout layout,
                                                std::size_t width, const char* label,
                                                std::size_t& use) {
  const auto [rows, cols] = activation_extents(ex, tokens, layout, width);
  return counted_matrix<Exec>(label, rows, cols, use);
}

// Whether attention's input and FF1's output are kept rounded to bf16 (SavedActivations): in a
// bf16 run. Half their bytes, and the numbers attention and the activation work from.
template <class Exec>
bool outputs_kept_in_bf16(const Exec& ex) {
  return ex.keeps_operands_in_bf16();
}

// Where an FC layer writes an output kept in bf16 in float, before the kernel that reads it first
// rounds it into the saved one: training, in that output's gradient buffer `gradient` (a block's
// backward pass writes it only after its forward pass or recomputation has read this); without
// gradients, a tokens x width buffer of its own in `layout` (its bytes added to `use`). Empty
// where outputs are not kept in bf16.
template <class Exec>
Matrix<typename Exec::Scalar> kept_output_staging(const Exec& ex,
                                                  const Matrix<typename Exec::Scalar>& gradient,
                                                  std::size_t tokens, Layout layout,
                                                  std::size_t width, const char* label,
                                                  std::size_t& use) {
  if (!outputs_kept_in_bf16(ex)) return {};
  if (elements(gradient) > 0) return gradient;
  return activation_matrix(ex, tokens, layout, width, label, use);
}

template <class Exec>
class ActivationStore {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Saved = SavedActivations<T>;

  ActivationStore(const Exec& ex, const ModelShape& shape, const ModelPlan& plan,
                  std::size_t attention_elements)
      : ex_(ex),
        shape_(shape),
        plan_(plan),
        attention_elements_(attention_elements),
        outputs_in_bf16_(outputs_kept_in_bf16(ex)) {}

  // From the next block on, layer k's saved input (QKV's, FF1's or FF2's) is kept in bf16 (half
  // the bytes, the same numbers: its GEMMs round it anyway) where `keep` says so: where the
  // kernel that writes it can write bf16 (PlannedFcLayers::input_written_in_bf16).
  void keep_input_in_bf16(FcKind k, bool keep) { in_bf16_[static_cast<int>(k)] = keep; }

  // A block's `slots` sets (checkpointed: its input alone); returns its id.
  std::size_t add_block(bool checkpointed, std::size_t slots) {
    Block& b = blocks_.emplace_back();
    b.checkpointed = checkpointed;
    for (std::size_t slot = 0; slot < slots; ++slot) {
      if (!checkpointed) {
        b.saved.push_back(saved_set(true));
        continue;
      }
      Saved input;
      input.x_in = activation(Layout::standard, shape_.hidden, "x_in");
      b.saved.push_back(input);
    }
    return blocks_.size() - 1;
  }

  // The set the checkpointed blocks' recomputations fill, once every block is added, where any
  // is checkpointed. It keeps QKV's and FF1's inputs in the forward pass's staging buffers
  // `normed` (a norm's output) and `output` (an FC layer's), where their layouts allow: the
  // backward pass touches neither; within a forward pass `normed` is free once QKV's input is
  // written unless FF1's norm stages there (a transposed FF1 input), and `output` once the
  // attention residual has read it (a recomputation stops before FF2 writes it; a model without
  // gradients keeps nothing).
  void add_recomputation(const Mat& normed, const Mat& output) {
    for (const Block& b : blocks_)
      if (b.checkpointed) {
        recompute_ = saved_set(false, &normed, &output);
        return;
      }
  }

  // Whether block `id` keeps its input alone and recomputes the rest.
  bool checkpointed(std::size_t id) const { return blocks_.at(id).checkpointed; }
  // Block id's input for `slot`: the residual stream the block starts from.
  const Mat& input(std::size_t id, std::size_t slot) const {
    return blocks_[id].saved.at(slot).x_in;
  }
  // The activations block `id` works in for `slot`: its own, or the recomputation's set around
  // its saved input.
  Saved working_set(std::size_t id, std::size_t slot) const {
    const Block& b = blocks_.at(id);
    MESHSLICE_ASSERT(slot < b.saved.size(), "ActivationStore: activation slot ", slot,
                     " of a block with ", b.saved.size());
    if (!b.checkpointed) return b.saved[slot];
    Saved s = recompute_;
    s.x_in = b.saved[slot].x_in;
    return s;
  }
  // The bytes of every saved set.
  std::size_t bytes() const { return bytes_; }

 private:
  struct Block {
    bool checkpointed = false;
    std::vector<Saved> saved;  // per activation slot; checkpointed: x_in alone
  };

  Mat activation(Layout layout, std::size_t width, const char* label) {
    return activation_matrix(ex_, shape_.tokens(), layout, width, label, bytes_);
  }
  Mat alloc(std::size_t rows, std::size_t cols, const char* label) {
    return counted_matrix<Exec>(label, rows, cols, bytes_);
  }
  const FcPlan& fc_plan(FcKind k) const { return plan_[static_cast<int>(k)]; }

  // A full set of saved activations (x_in too unless `with_input` is false); the staging
  // buffers given: the recomputation's (see add_recomputation()).
  Saved saved_set(bool with_input, const Mat* normed = nullptr, const Mat* output = nullptr) {
    const std::size_t H = shape_.hidden, rows = shape_.tokens() / ex_.mesh_rows();
    const FcPlan &pq = fc_plan(FcKind::qkv), &pa = fc_plan(FcKind::attn_out);
    const FcPlan& p1 = fc_plan(FcKind::ff1);
    const bool ff1_in_output = output && p1.input() == Layout::standard;
    const bool qkv_in_normed = normed && ff1_in_output && pq.input() == Layout::standard;
    Saved s;
    if (with_input) s.x_in = activation(Layout::standard, H, "x_in");
    s.rinv1 = alloc(rows, 1, "rinv");
    s.qkv_in = input(FcKind::qkv, H, "qkv_in", qkv_in_normed ? normed : nullptr);
    s.qkv = fc_output(Layout::standard, 3 * H, "qkv");
    s.attention = model_vector<Exec>("attention_saved", attention_elements_);
    bytes_ += elements(s.attention) * sizeof(T);
    s.a = activation(Layout::standard, H, "attention");
    s.ao_in = pa.input() == Layout::standard ? s.a : activation(pa.input(), H, "attn_out_in");
    s.x_mid = activation(Layout::standard, H, "x_mid");
    s.rinv2 = alloc(rows, 1, "rinv");
    s.ff1_in = input(FcKind::ff1, H, "ff1_in", ff1_in_output ? output : nullptr);
    s.u = fc_output(p1.output(), fc_outputs(shape_, FcKind::ff1), "ff1_out");
    s.ff2_in = input(FcKind::ff2, shape_.ffn(), "ff2_in");
    return s;
  }

  // Layer k's saved input, `width` wide in the layout its plan gives it, in T or kept in bf16
  // (keep_input_in_bf16); in `staging` (a forward pass's work buffer) where given, else in its
  // own memory. Kept in bf16, it fills the memory of half as many elements of T (counted so).
  GemmOperand<T> input(FcKind k, std::size_t width, const char* label,
                       const Mat* staging = nullptr) {
    const Layout layout = fc_plan(k).input();
    if (!in_bf16_[static_cast<int>(k)])
      return staging ? *staging : activation(layout, width, label);
    return kept_in_bf16(layout, width, label, staging);
  }

  // Attention's input or FF1's output, in T or kept in bf16 (outputs_kept_in_bf16).
  GemmOperand<T> fc_output(Layout layout, std::size_t width, const char* label) {
    if (outputs_in_bf16_) return kept_in_bf16(layout, width, label);
    return activation(layout, width, label);
  }

  // A T x width activation in `layout` kept in bf16: in `staging` where given, else in its own
  // memory of half as many elements of T (counted so).
  GemmOperand<T> kept_in_bf16(Layout layout, std::size_t width, const char* label,
                              const Mat* staging = nullptr) {
    const auto [rows, cols] = activation_extents(ex_, shape_.tokens(), layout, width);
    GemmOperand<T> kept;
    kept.value = staging ? *staging : alloc(1, elements_holding<T, bfloat16>(rows * cols), label);
    kept.rounded = Matrix<bfloat16>(reinterpret_cast<bfloat16*>(kept.value.data()), rows, cols);
    return kept;
  }

  const Exec& ex_;
  ModelShape shape_;
  ModelPlan plan_;
  std::size_t attention_elements_;
  std::vector<Block> blocks_;
  Saved recompute_;
  std::size_t bytes_ = 0;
  std::array<bool, kFcKinds> in_bf16_{};  // keep_input_in_bf16
  bool outputs_in_bf16_;                  // outputs_kept_in_bf16
};

}  // namespace meshslice
