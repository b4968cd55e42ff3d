#pragma once
// The block's attention half: x_mid = x_in + attn_out(attention(qkv(norm1(x_in)))), causal
// multi-head attention local to each chip (tokens over mesh rows keep whole sequences, mesh
// columns whole heads; model/kernels/attention.hpp), its projections through the planned FC
// layers. Its layers, parameters and GEMMs: block/attention_layers.hpp.
// With grouped-query attention (model.kv_heads below model.heads) the projection's narrower
// output has its keys and values repeated per query head before attention, and their gradients
// summed over each group after it (model/kernels/grouped_query.hpp); the saved activation is the
// repeated one, which the attention kernels read. In a bf16 run it is kept rounded to bf16 (as
// autocast's linear layer outputs it): repeat_kv rounds it as it repeats, or without groups a
// rounding kernel, from the projection's float output.
//
//     AttentionModule<Exec> attention(context, trainable, memory);
//     Saved saved = AttentionModule<Exec>::make_saved(make, staging);   // per block and slot
//     attention.forward(AttentionLayer::qkv, params, x_in, saved, x_mid);
//     attention.backward(AttentionLayer::qkv, params, x_in, saved, d_x_mid, d_x_in, accumulate,
//                        sync);
#include <array>
#include <memory>
#include <type_traits>

#include "block/attention_layers.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "exec/caller_work.hpp"
#include "model/activation_buffers.hpp"
#include "model/kernels/attention.hpp"
#include "model/kernels/grouped_query.hpp"
#include "model/memory_use.hpp"
#include "model/modules/block_context.hpp"

namespace meshslice {

template <class Exec>
class AttentionModule {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Layer = AttentionLayer;

  // What the module keeps for its backward pass (per block and micro-batch in flight), each in
  // the layout its consumer reads.
  struct Saved {
    Mat rinv;               // norm1's reciprocal RMS per row
    GemmOperand<T> qkv_in;  // QKV's input, norm1's output (in bf16 where its plans take it so)
    // Attention's input: QKV's output, k and v repeated per query head; in a bf16 run kept
    // rounded to bf16, the values attention takes, as autocast's bf16 linear outputs (no GEMM
    // reads it; the pair is GemmOperand's: the rounded matrix and the memory it lives in).
    GemmOperand<T> qkv;
    Buffer<T> attention;  // what attention keeps: log-sum-exps or probabilities (AttentionShape)
    Mat a;                // attention's output
    Mat ao_in;            // attn_out's input: a, or a re-laid out in its plan's layout
  };

  // A Saved set; QKV's input in the staging's `normed` (a recomputation's, where nothing writes
  // it between norm1 and the backward pass) where given and QKV reads the standard layout.
  static Saved make_saved(SavedTensorMaker<Exec>& make, const RecomputeStaging<T>& staging) {
    const std::size_t H = make.shape().hidden;
    const Mat* normed = staging.normed;
    const bool in_normed =
        normed && make.plan(block_fc(AttentionFc::qkv)).input() == Layout::standard;
    const Layout ao_in = make.plan(block_fc(AttentionFc::out)).input();
    Saved s;
    s.rinv = make.per_row("rinv");
    s.qkv_in = make.input(block_fc(AttentionFc::qkv), H, "qkv_in", in_normed ? normed : nullptr);
    s.qkv = make.output(Layout::standard, 3 * H, "qkv");
    s.attention = make.vector("attention_saved", make.attention().saved_elements());
    s.a = make.activation(Layout::standard, H, "attention");
    s.ao_in = ao_in == Layout::standard ? s.a : make.activation(ao_in, H, "attn_out_in");
    return s;
  }

  // How its forward pass uses the context's `normed` staging buffer: norm1's output staged there
  // before its re-layout into a transposed QKV input, or else QKV's input kept there if offered.
  static NormedUse normed_use(const SavedTensorMaker<Exec>& make) {
    return make.plan(block_fc(AttentionFc::qkv)).input() == Layout::standard
               ? NormedUse::keeps_if_offered
               : NormedUse::stages;
  }

  AttentionModule(BlockContext<Exec>& context, bool trainable, MemoryUse& memory)
      : c_(context),
        work_{c_.attention.forward_work(), c_.attention.backward_work()},
        group_{c_.attention.heads, c_.shape.kv() / static_cast<std::size_t>(c_.ex.mesh_cols()),
               c_.attention.dim} {
    const AttentionShape& shape = c_.attention;
    if constexpr (Exec::holds_data) local_ = std::make_unique<LocalAttention<T>>(shape, trainable);
    memory.work += LocalAttention<T>::bytes_for(shape, trainable);
    const std::size_t tokens = c_.shape.tokens(), H = c_.shape.hidden;
    const std::size_t narrow = fc_outputs(c_.shape, block_fc(AttentionFc::qkv));
    if (trainable) {
      g_a_ = activation_matrix(c_.ex, tokens, Layout::standard, H, "grad_attention", memory.work);
      g_qkv_ = activation_matrix(c_.ex, tokens, Layout::standard, 3 * H, "grad_qkv", memory.work);
      if (grouped())
        g_qkv_out_ =
            activation_matrix(c_.ex, tokens, Layout::standard, narrow, "grad_qkv_out", memory.work);
    }
    // The projection's output before attention's input is made from it: grouped, narrow (k and v
    // repeated from it); otherwise, in a bf16 run, in float before it is rounded.
    qkv_ = grouped()
               ? activation_matrix(c_.ex, tokens, Layout::standard, narrow, "qkv_out", memory.work)
               : kept_output_staging(c_.ex, g_qkv_, tokens, Layout::standard, narrow, "qkv_out",
                                     memory.work);
  }

  // One layer's forward step: from the block's input x_in to the residual stream x_mid.
  void forward(Layer layer, const BlockParams<T>& w, const Mat& x_in, const Saved& s,
               const Mat& x_mid) {
    switch (layer) {
      case AttentionLayer::norm:
        return c_.norm_into_input(block_fc(AttentionFc::qkv), x_in,
                                  w[AttentionParam::norm_gain].value, s.rinv, s.qkv_in);
      case AttentionLayer::qkv: {
        const bool staged = grouped() || s.qkv.in_bf16();  // attention's input made from qkv_
        c_.fc.forward_to_standard(block_fc(AttentionFc::qkv), s.qkv_in, w[AttentionParam::qkv],
                                  staged ? qkv_ : s.qkv.value);
        if (!staged) return;
        const double n = double(s.qkv.extent(0) * s.qkv.extent(1));
        if (!grouped())  // the rounding alone: the kernel whose loop a CPU vectorizes
          return c_.ex.compute("to_bfloat16", kernel_work::repeat_kv(n), [&] {
            if constexpr (std::is_same_v<T, float>)  // a bf16 run keeps its tensors in float
              to_bfloat16(c_.ex.compute_space(), qkv_, s.qkv.rounded, Mat(), Matrix<bfloat16>());
          });
        return c_.ex.compute("repeat_kv", kernel_work::repeat_kv(n), [&] {
          if (s.qkv.in_bf16()) return repeat_kv(c_.ex.compute_space(), group_, qkv_, s.qkv.rounded);
          repeat_kv(c_.ex.compute_space(), group_, qkv_, s.qkv.value);
        });
      }
      case AttentionLayer::attention:
        return c_.ex.compute("attention", work_[0], [&] {
          local_->forward(c_.ex.compute_space(), s.qkv, s.attention, s.a);
        });
      case AttentionLayer::out:
        c_.relayouts.in_layout(s.a, c_.fc.plan(block_fc(AttentionFc::out)).input(), c_.shape.hidden,
                               s.ao_in);
        return c_.fc.forward_to_standard(block_fc(AttentionFc::out), s.ao_in,
                                         w[AttentionParam::out], c_.output);
      case AttentionLayer::residual: return c_.residual(x_mid, x_in, c_.output);
      default: MESHSLICE_ASSERT(false, "AttentionModule: not its layer");
    }
  }

  // One layer's backward step: from the gradient of x_mid, d_x_mid, to the block's input
  // gradient d_x_in (x_in: the block's saved input).
  void backward(Layer layer, const BlockParams<T>& w, const Mat& x_in, const Saved& s,
                const Mat& d_x_mid, const Mat& d_x_in, bool accumulate,
                ParameterUpdate<Exec>* sync) {
    switch (layer) {
      case AttentionLayer::residual: return c_.residual(d_x_in, d_x_mid, Mat());
      case AttentionLayer::out:
        return c_.fc_backward_in_standard(block_fc(AttentionFc::out), w[AttentionParam::out],
                                          s.ao_in, d_x_mid, g_a_, accumulate, sync);
      case AttentionLayer::attention:
        return c_.ex.compute("attention_backward", work_[1], [&] {
          local_->backward(c_.ex.compute_space(), s.qkv, s.a, g_a_, s.attention, g_qkv_);
        });
      case AttentionLayer::qkv:
        if (grouped())
          c_.ex.compute(
              "sum_kv", kernel_work::sum_kv(double(elements(g_qkv_)), double(elements(g_qkv_out_))),
              [&] { sum_kv_over_groups(c_.ex.compute_space(), group_, g_qkv_, g_qkv_out_); });
        return c_.fc_backward_in_standard(block_fc(AttentionFc::qkv), w[AttentionParam::qkv],
                                          s.qkv_in, grouped() ? g_qkv_out_ : g_qkv_, c_.normed_grad,
                                          accumulate, sync);
      case AttentionLayer::norm: {
        const Parameter<T>& gain = w[AttentionParam::norm_gain];
        c_.norm.backward(c_.normed_grad, x_in, gain.value, s.rinv, d_x_in, gain.grad, accumulate);
        if (sync) sync->start(gain);
        return;
      }
      default: MESHSLICE_ASSERT(false, "AttentionModule: not its layer");
    }
  }

 private:
  bool grouped() const { return group_.kv < group_.heads; }

  BlockContext<Exec>& c_;
  std::unique_ptr<LocalAttention<T>> local_;  // where the executor holds data
  std::array<LocalWork, 2> work_;             // what its forward and backward passes cost
  GroupedQuery group_;                        // the chip's query, key and value heads
  Mat g_a_, g_qkv_;                           // the gradients of attention's output and input
  Mat qkv_;        // the projection's output, grouped (narrow) or kept in bf16 (training: g_qkv_)
  Mat g_qkv_out_;  // grouped: the projection's output gradient (narrow)
};

}  // namespace meshslice
