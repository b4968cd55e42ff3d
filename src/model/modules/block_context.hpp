#pragma once
// What the modules of a transformer block share on a rank (model/modules/attention_module.hpp,
// mlp.hpp): the executor, the planned FC layers, the re-layouts, the norm, and the work
// buffers that pass activations and gradients between their steps; and the steps they have in
// common: the residual stream's copy and add, a norm into an FC layer's input, and an FC layer's
// backward step in the standard layout. A module runs its layers' steps (model/block_layers.hpp
// lists them in order; model/modules/block_modules.hpp runs them) on one block's parameters,
// its residual streams and the Saved set the module declares (model/activation_store.hpp keeps
// one per block and micro-batch in flight); `sync` (null: not the last micro-batch) starts a
// parameter's dp averaging as soon as its gradient is complete.
#include <cstddef>

#include "block/block_work.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/layer_plan.hpp"
#include "model/model_config.hpp"
#include "model/modules/rms_norm.hpp"
#include "model/parameter_update.hpp"
#include "model/planned_fc_layers.hpp"
#include "model/relayouts.hpp"
#include "parameters/parameter_set.hpp"

namespace meshslice {

// One block's parameters in the set (in ParamKind's order: its modules' in turn), or one
// module's: w[AttentionParam::qkv] is its parameter of that place in its own list.
template <class T>
struct BlockParams {
  const ParameterSet<T>* set = nullptr;
  std::size_t first = 0;  // the block's (module's) first parameter's place in the set
  template <class Param>
  const Parameter<T>& operator[](Param param) const {
    return (*set)[first + static_cast<std::size_t>(param)];
  }
  // The parameters from the block's `offset`-th on (a module's).
  BlockParams from(std::size_t offset) const { return {set, first + offset}; }
};

template <class Exec>
struct BlockContext {
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  Exec& ex;
  ModelShape shape;
  AttentionShape attention;  // attention on this chip: its sequences, whole heads and kernel
  PlannedFcLayers<Exec>& fc;
  Relayouts<Exec>& relayouts;
  RmsNorm<Exec>& norm;
  // Standard-layout T x H work buffers: a norm's output and an FC layer's output (the forward
  // pass's staging); the gradient of a norm's output (trainable).
  Mat normed, output, normed_grad;

  // out = x + delta (delta empty: out = x), the residual stream.
  void residual(const Mat& out, const Mat& x, const Mat& delta) {
    // A copy, then an add that reads both and writes the sum.
    const double n = static_cast<double>(elements(out));
    ex.compute("residual", kernel_work::residual(n, elements(delta) > 0), [&] {
      Kokkos::deep_copy(ex.compute_space(), out, x);
      if (elements(delta)) add_into(ex.compute_space(), out, delta);
    });
  }

  // The norm of x into layer k's input (written there, or staged and re-laid out into it; kept
  // in bf16 where PlannedFcLayers::input_written_in_bf16 said so, written rounded).
  void norm_into_input(FcKind k, const Mat& x, const Mat& gain, const Mat& rinv,
                       const GemmOperand<T>& input) {
    if (input.in_bf16()) return norm.forward(x, gain, rinv, input.rounded);  // the layouts agree
    relayouts.produce_into(Layout::standard, fc.plan(k).input(), shape.hidden, normed, input.value,
                           [&](const Mat& h) { norm.forward(x, gain, rinv, h); });
  }

  // The backward step of FC layer k (parameter p) whose output gradient dy and input gradient
  // dx are in the standard layout (x: its saved input); the weight's gradient first, so that
  // its dp averaging overlaps the data GEMM.
  void fc_backward_in_standard(FcKind k, const Parameter<T>& p, const GemmOperand<T>& x,
                               const Mat& dy, const Mat& dx, bool accumulate,
                               ParameterUpdate<Exec>* sync) {
    const auto dy_out = fc.output_gradient(k, dy);  // in the layout the layer gives its output
    fc.backward_weight(k, x, dy_out, p.grad, accumulate);
    if (sync) sync->start(p);
    fc.backward_data_to_standard(k, dy_out, p, dx);
  }
};

}  // namespace meshslice
