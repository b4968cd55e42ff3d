#pragma once
// A block's activations on a rank: T x width shards of the model's T tokens in a layout, as work
// buffers (a module's, the FC layers') or as the tensors a module saves for its backward pass,
// which SavedTensorMaker makes for each module's Saved set (model/activation_store.hpp holds the
// sets; the modules' declarations in block/ count them for the memory bound and the tuner).
//
//     SavedTensorMaker<Exec> make(ex, shape, plan);
//     Mat x = make.activation(Layout::standard, shape.hidden, "x_mid");
//     GemmOperand<T> in = make.input(block_fc(MlpFc::ff1), H, "ff1_in");  // T or kept in bf16
#include <cstddef>
#include <utility>
#include <vector>

#include "comm/comm_scratch.hpp"
#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"
#include "exec/gemm_operand.hpp"
#include "model/layer_plan.hpp"
#include "model/model_buffer.hpp"
#include "model/model_config.hpp"

namespace meshslice {

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

// Whether attention's input and FF1's output are kept rounded to bf16 (their modules' Saved
// sets): in a bf16 run. Half their bytes, and the numbers attention and the activation work from.
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

// The forward pass's staging buffers that a recomputation's saved set may keep a module's
// tensors in (model/modules/block_modules.hpp's make_saved says which module may use which;
// null: none): a norm's output and an FC layer's.
template <class T>
struct RecomputeStaging {
  const Matrix<T>* normed = nullptr;
  const Matrix<T>* output = nullptr;
};

// Makes the tensors the modules save for their backward passes, counting their bytes: each
// module's make_saved() asks it for what its Saved set holds, in the layouts the plan gives.
template <class Exec>
class SavedTensorMaker {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  SavedTensorMaker(const Exec& ex, const ModelShape& shape, const ModelPlan& plan)
      : ex_(ex),
        shape_(shape),
        plan_(plan),
        attention_(chip_attention(ex, shape, plan)),
        outputs_in_bf16_(outputs_kept_in_bf16(ex)) {}

  const ModelShape& shape() const { return shape_; }
  // Attention on this chip (what it keeps depends on its kernel).
  const AttentionShape& attention() const { return attention_; }
  const FcPlan& plan(FcKind k) const { return plan_[k]; }
  // The bytes of everything made so far.
  std::size_t bytes() const { return bytes_; }

  // From the next set on, layer k's saved input is kept in bf16 (half the bytes, the same
  // numbers: its GEMMs round it anyway) where `keep` says so: where the kernel that writes it can
  // write bf16 (PlannedFcLayers::input_written_in_bf16).
  void keep_input_in_bf16(FcKind k, bool keep) { in_bf16_[static_cast<std::size_t>(k)] = keep; }

  // A T x width activation in `layout`, in T.
  Mat activation(Layout layout, std::size_t width, const char* label) {
    return activation_matrix(ex_, shape_.tokens(), layout, width, label, bytes_);
  }
  // A value per token row of the standard layout on this chip (a norm's reciprocal RMS).
  Mat per_row(const char* label) {
    return counted_matrix<Exec>(label, shape_.tokens() / ex_.mesh_rows(), 1, bytes_);
  }
  Buffer<T> vector(const char* label, std::size_t n) {
    bytes_ += n * sizeof(T);
    return model_vector<Exec>(label, n);
  }

  // Layer k's saved input, `width` wide in the layout its plan gives it, in T or kept in bf16
  // (keep_input_in_bf16); in `staging` (a forward pass's work buffer) where given, else in its
  // own memory. Kept in bf16, it fills the memory of half as many elements of T (counted so).
  GemmOperand<T> input(FcKind k, std::size_t width, const char* label,
                       const Mat* staging = nullptr) {
    const Layout layout = plan(k).input();
    if (!in_bf16_[static_cast<std::size_t>(k)])
      return staging ? *staging : activation(layout, width, label);
    return kept_in_bf16(layout, width, label, staging);
  }

  // An FC layer's output that a kernel other than a GEMM reads (attention's input, FF1's output),
  // in T or kept in bf16 (outputs_kept_in_bf16).
  GemmOperand<T> output(Layout layout, std::size_t width, const char* label) {
    if (outputs_in_bf16_) return kept_in_bf16(layout, width, label);
    return activation(layout, width, label);
  }

 private:
  // A T x width activation in `layout` kept in bf16: in `staging` where given, else in its own
  // memory of half as many elements of T (counted so).
  GemmOperand<T> kept_in_bf16(Layout layout, std::size_t width, const char* label,
                              const Mat* staging = nullptr) {
    const auto [rows, cols] = activation_extents(ex_, shape_.tokens(), layout, width);
    GemmOperand<T> kept;
    kept.value = staging ? *staging
                         : counted_matrix<Exec>(label, 1,
                                                elements_holding<T, bfloat16>(rows * cols), bytes_);
    kept.rounded = Matrix<bfloat16>(reinterpret_cast<bfloat16*>(kept.value.data()), rows, cols);
    return kept;
  }

  const Exec& ex_;
  ModelShape shape_;
  ModelPlan plan_;
  AttentionShape attention_;
  bool outputs_in_bf16_;  // outputs_kept_in_bf16
  // keep_input_in_bf16's, by FC layer
  std::vector<bool> in_bf16_ = std::vector<bool>(block_fc_count());
  std::size_t bytes_ = 0;
};

}  // namespace meshslice
