#pragma once
// The block's feed-forward half: out = x_mid + ff2(act(ff1(norm2(x_mid)))), its two FC layers
// through the planned FC layers. The activation is the MLP's kind (model.mlp,
// block/mlp_activations.hpp): act(u) on FF1's F outputs (GeLU), or a gated one, act(gate) * up on
// FF1's 2F outputs (SwiGLU, GeGLU: the gate and up projections in one weight, grouped per chip
// block: parameters/parameter_layout.hpp), as Megatron's MLP with a gated linear unit. It runs
// in FF1's output layout and its output lands in FF2's input layout, re-laid out when the two
// differ. Its layers, parameters and GEMMs: block/mlp_layers.hpp.
//
//     MlpModule<Exec> mlp(context, trainable, memory);
//     Saved saved = MlpModule<Exec>::make_saved(make, staging);   // per block and slot
//     mlp.forward(MlpLayer::ff1, params, x_mid, saved, out);
//     mlp.backward(MlpLayer::ff1, params, x_mid, saved, dout, d_x_mid, accumulate, sync);
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"
#include "model/activation_buffers.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/memory_use.hpp"
#include "model/modules/block_context.hpp"

namespace meshslice {

template <class Exec>
class MlpModule {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Layer = MlpLayer;

  // What the module keeps for its backward pass (per block and micro-batch in flight), each in
  // the layout its consumer reads; the GEMMs' inputs in bf16 where their plans take them so.
  struct Saved {
    Mat rinv;               // norm2's reciprocal RMS per row
    GemmOperand<T> ff1_in;  // FF1's input, norm2's output
    // FF1's output, which the activation's backward step reads: in a bf16 run kept rounded to
    // bf16, the values the activation takes, as autocast's bf16 linear outputs.
    GemmOperand<T> u;
    GemmOperand<T> ff2_in;  // FF2's input, the activation's output
  };

  // A Saved set; FF1's input in the staging's `output` (a recomputation's, where nothing writes it
  // between norm2 and the backward pass) where given and FF1 reads the standard layout.
  static Saved make_saved(SavedTensorMaker<Exec>& make, const RecomputeStaging<T>& staging) {
    const ModelShape& shape = make.shape();
    const Mat* output = staging.output;
    const Layout ff1_in = make.plan(block_fc(MlpFc::ff1)).input();
    const bool in_output = output && ff1_in == Layout::standard;
    Saved s;
    s.rinv = make.per_row("rinv");
    s.ff1_in =
        make.input(block_fc(MlpFc::ff1), shape.hidden, "ff1_in", in_output ? output : nullptr);
    s.u = make.output(make.plan(block_fc(MlpFc::ff1)).output(),
                      fc_outputs(shape, block_fc(MlpFc::ff1)), "ff1_out");
    s.ff2_in = make.input(block_fc(MlpFc::ff2), shape.ffn(), "ff2_in");
    return s;
  }
  // How its forward pass uses the context's `normed` staging buffer: norm2's output staged there
  // before its re-layout into a transposed FF1 input (it keeps nothing there).
  static NormedUse normed_use(const SavedTensorMaker<Exec>& make) {
    return make.plan(block_fc(MlpFc::ff1)).input() == Layout::standard ? NormedUse::none
                                                                       : NormedUse::stages;
  }

  MlpModule(BlockContext<Exec>& context, bool trainable, MemoryUse& memory) : c_(context) {
    const std::size_t tokens = c_.shape.tokens(), F = c_.shape.ffn();
    const Layout u = ff1_output(), z = ff2_input();
    if (z != u) {
      z_ = activation_matrix(c_.ex, tokens, u, F, "activation_out", memory.work);
      c_.relayouts.plan(F);
    }
    const std::size_t ff1_out = fc_outputs(c_.shape, block_fc(MlpFc::ff1));
    if (trainable) g_u_ = activation_matrix(c_.ex, tokens, u, ff1_out, "grad_ff1_out", memory.work);
    // FF1's output in float before the activation rounds it (a bf16 run).
    u_float_ = kept_output_staging(c_.ex, g_u_, tokens, u, ff1_out, "ff1_out", memory.work);
    if (!trainable) return;
    // An ungated activation's gradient works in place; a gated one's output gradient is half
    // its input's.
    g_act_ =
        gated() ? activation_matrix(c_.ex, tokens, u, F, "grad_activation_out", memory.work) : g_u_;
    if (z != u) g_z_ = activation_matrix(c_.ex, tokens, z, F, "grad_ff2_in", memory.work);
  }

  // One layer's forward step: from the residual stream x_mid to the block's output `out`.
  void forward(Layer layer, const BlockParams<T>& w, const Mat& x_mid, const Saved& s,
               const Mat& out) {
    switch (layer) {
      case MlpLayer::norm:
        return c_.norm_into_input(block_fc(MlpFc::ff1), x_mid, w[MlpParam::norm_gain].value, s.rinv,
                                  s.ff1_in);
      case MlpLayer::ff1:
        return c_.fc.forward(block_fc(MlpFc::ff1), s.ff1_in, w[MlpParam::ff1], ff1_written(s));
      case MlpLayer::activation:                                       // in FF1's output layout
        if (s.ff2_in.in_bf16()) return activate(s, s.ff2_in.rounded);  // the layouts agree
        return c_.relayouts.produce_into(ff1_output(), ff2_input(), c_.shape.ffn(), z_,
                                         s.ff2_in.value, [&](const Mat& z) { activate(s, z); });
      case MlpLayer::ff2:
        return c_.fc.forward_to_standard(block_fc(MlpFc::ff2), s.ff2_in, w[MlpParam::ff2],
                                         c_.output);
      case MlpLayer::residual: return c_.residual(out, x_mid, c_.output);
      default: MESHSLICE_ASSERT(false, "MlpModule: not its layer");
    }
  }

  // One layer's backward step: from dout, the block's output gradient, to the gradient of x_mid,
  // d_x_mid (x_mid: the saved residual stream).
  void backward(Layer layer, const BlockParams<T>& w, const Mat& x_mid, const Saved& s,
                const Mat& dout, const Mat& d_x_mid, bool accumulate, ParameterUpdate<Exec>* sync) {
    switch (layer) {
      case MlpLayer::residual:  // the residual path
        return c_.residual(d_x_mid, dout, Mat());
      case MlpLayer::ff2: {
        const Parameter<T>& p = w[MlpParam::ff2];
        const auto dy = c_.fc.output_gradient(block_fc(MlpFc::ff2), dout);
        c_.fc.backward_weight(block_fc(MlpFc::ff2), s.ff2_in, dy, p.grad, accumulate);
        if (sync) sync->start(p);
        return c_.relayouts.produce_into(ff2_input(), ff1_output(), c_.shape.ffn(), g_z_, g_act_,
                                         [&](const Mat& dz) {
                                           c_.fc.backward_data(block_fc(MlpFc::ff2), dy, p, dz);
                                         });
      }
      case MlpLayer::activation:
        if (s.u.in_bf16()) return activate_backward(s.u.rounded);
        return activate_backward(s.u.value);
      case MlpLayer::ff1: {
        const Parameter<T>& p = w[MlpParam::ff1];
        const auto dy = c_.fc.output_gradient_as_laid_out(block_fc(MlpFc::ff1), g_u_);
        c_.fc.backward_weight(block_fc(MlpFc::ff1), s.ff1_in, dy, p.grad, accumulate);
        if (sync) sync->start(p);
        return c_.fc.backward_data_to_standard(block_fc(MlpFc::ff1), dy, p, c_.normed_grad);
      }
      case MlpLayer::norm: {
        const Parameter<T>& gain = w[MlpParam::norm_gain];
        c_.norm.backward(c_.normed_grad, x_mid, gain.value, s.rinv, d_x_mid, gain.grad, accumulate);
        if (sync) sync->start(gain);
        return;
      }
      default: MESHSLICE_ASSERT(false, "MlpModule: not its layer");
    }
  }

 private:
  bool gated() const { return mlp_gated(c_.shape.mlp); }
  Layout ff1_output() const { return c_.fc.plan(block_fc(MlpFc::ff1)).output(); }
  Layout ff2_input() const { return c_.fc.plan(block_fc(MlpFc::ff2)).input(); }

  // Where FF1's forward GEMM writes its output: the saved u, or, kept in bf16, the float buffer
  // the activation reads and rounds into it.
  const Mat& ff1_written(const Saved& s) const { return s.u.in_bf16() ? u_float_ : s.u.value; }

  // z = act(u), u FF1's output, z in its layout (its elements T or bf16); u rounded into the
  // saved one first where that is kept in bf16.
  template <class Z>
  void activate(const Saved& s, const Matrix<Z>& z) {
    const double n = static_cast<double>(elements(z));
    const bool rows = ff1_output() == Layout::transposed;  // features along the rows
    const Mat& u = ff1_written(s);
    with_mlp_activation(c_.shape.mlp, [&](auto activation) {
      using MlpActivation = decltype(activation);
      c_.ex.compute(MlpActivation::name, kernel_work::mlp_activation(c_.shape.mlp, n), [&] {
        if constexpr (MlpActivation::gated)
          gated_forward<MlpActivation>(c_.ex.compute_space(), u, z, rows, s.u.rounded);
        else
          activation_forward<MlpActivation>(c_.ex.compute_space(), u, z, s.u.rounded);
      });
    });
  }

  // FF1's output gradient g_u_ from the activation's, g_act_ (u: FF1's saved output, its
  // elements T or bf16).
  template <class U>
  void activate_backward(const Matrix<U>& u) {
    const double n = static_cast<double>(elements(g_act_));
    const bool rows = ff1_output() == Layout::transposed;
    with_mlp_activation(c_.shape.mlp, [&](auto activation) {
      using MlpActivation = decltype(activation);
      c_.ex.compute(backward_label<MlpActivation>(),
                    kernel_work::mlp_activation_backward(c_.shape.mlp, n), [&] {
                      if constexpr (MlpActivation::gated)
                        gated_backward<MlpActivation>(c_.ex.compute_space(), u, g_act_, g_u_, rows);
                      else
                        activation_backward<MlpActivation>(c_.ex.compute_space(), u, g_u_);
                    });
    });
  }

  BlockContext<Exec>& c_;
  Mat z_;        // the activation's output before its re-layout to FF2's input (the layouts differ)
  Mat u_float_;  // FF1's output before it is rounded, where it is kept in bf16 (training: g_u_)
  Mat g_u_;      // FF1's output gradient
  Mat g_act_;    // the activation's output gradient in FF1's layout (ungated: g_u_, in place)
  Mat g_z_;      // FF2's input gradient before its re-layout
};

}  // namespace meshslice
