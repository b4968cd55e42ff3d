#pragma once
// The transformer block's FC layers as the block plan says (model/layer_plan.hpp): each layer's
// three distributed GEMMs (model/fc_layer.hpp) on this chip's shards, in the layouts the plan
// gives its input and output, and the re-layouts between those and the standard layout the rest
// of the block works in (model/relayouts.hpp). One object serves every block of a rank: the
// weights are the blocks' own.
//
//     PlannedFcLayers<Exec> fc(ex, shape, plan, trainable, relayouts, memory);
//     const FcKind qkv = block_fc(AttentionFc::qkv);
//     fc.forward_to_standard(qkv, input, w, y);                // y = x w, standard layout
//     const auto g = fc.output_gradient(qkv, dy);              // in the layer's output layout
//     fc.backward_weight(qkv, input, g, dw, accumulate);       // dw (+)= x^T g
//     fc.backward_data_to_standard(qkv, g, w, dx);             // dx = g w^T, standard layout
#include <cstddef>
#include <memory>
#include <vector>

#include "core/errors.hpp"
#include "model/activation_buffers.hpp"
#include "model/fc_layer.hpp"
#include "model/layer_plan.hpp"
#include "model/memory_use.hpp"
#include "model/parameter_maker.hpp"
#include "model/relayouts.hpp"
#include "parameters/parameter_set.hpp"

namespace meshslice {

template <class Exec>
class PlannedFcLayers {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Operand = typename FcLayer<Exec>::Operand;  // an output gradient as the GEMMs read it

  // UserError naming the layer when its plan cannot run on the mesh.
  PlannedFcLayers(Exec& ex, const ModelShape& shape, const ModelPlan& plan, bool trainable,
                  Relayouts<Exec>& relayouts, MemoryUse& memory)
      : ex_(ex),
        shape_(shape),
        plan_(plan),
        relayouts_(relayouts),
        layers_(plan.blocks.size()),
        out_t_(plan.blocks.size()),
        in_t_(plan.blocks.size()) {
    const std::size_t tokens = shape.tokens();
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      const FcKind kind = FcKind(k);
      const FcPlan& p = plan_[k];
      const std::size_t in = fc_inputs(shape, kind), out = fc_outputs(shape, kind);
      try {
        layers_[k] = std::make_unique<FcLayer<Exec>>(ex, p.stationary, p.transposed, tokens, in,
                                                     out, p.gemms, trainable);
      } catch (const UserError& e) {
        throw UserError(concat("layer ", fc_name(kind), ": ", e.what()));
      }
      if (p.output() == Layout::transposed)
        out_t_[k] =
            activation_matrix(ex, tokens, Layout::transposed, out, "fc_output_t", memory.work);
      if (p.input() == Layout::transposed && trainable)
        in_t_[k] =
            activation_matrix(ex, tokens, Layout::transposed, in, "fc_input_grad_t", memory.work);
    }
  }

  const FcPlan& plan(FcKind k) const { return plan_[k]; }

  // Plans the re-layouts the layers need, both ways (sizes checked now, not in the first step).
  void plan_relayouts() {
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      if (plan_[k].input() == Layout::transposed) relayouts_.plan(fc_inputs(shape_, FcKind(k)));
      if (plan_[k].output() == Layout::transposed) relayouts_.plan(fc_outputs(shape_, FcKind(k)));
    }
  }

  // Whether layer k's input may be kept in bf16: a bf16 run whose plans for the GEMMs that
  // read it take operands kept in bf16.
  bool input_kept_in_bf16(FcKind k) const {
    return ex_.keeps_operands_in_bf16() && layer(k).input_takes_bf16();
  }
  // Whether the kernel that writes layer k's input, in layout `written`, writes it kept in bf16
  // (rounded as it writes): where it may be and needs no re-layout after (the norms write QKV's
  // and FF1's inputs in the standard layout, the MLP's activation FF2's in FF1's output layout).
  bool input_written_in_bf16(FcKind k, Layout written) const {
    return input_kept_in_bf16(k) && plan(k).input() == written;
  }

  // Sizes the scratch in which a bf16 run rounds layer k's operands that arrive in float, its
  // input among them unless `input_in_bf16` (FcLayer::reserve_rounding).
  void reserve_rounding(FcKind k, bool input_in_bf16) { layer(k).reserve_rounding(input_in_bf16); }

  // Whether layer k's weight may be kept in bf16 (Parameter::rounded): a bf16 run whose plans
  // for the GEMMs that read it take operands kept in bf16.
  bool weight_kept_in_bf16(FcKind k) const { return layer(k).weight_kept_in_bf16(); }

  // Layer k's GEMMs on this chip's shards, in the plan's layouts: y = x w, dx = dy w^T,
  // dw = x^T dy (or with `accumulate` dw += x^T dy). x may be kept in bf16 where
  // input_kept_in_bf16(k); the weight w is read in bf16 where it keeps a copy so.
  void forward(FcKind k, const GemmOperand<T>& x, const Parameter<T>& w, const Mat& y) {
    layer(k).forward(ex_.wrap_operand(x), ex_.wrap_operand(weight_operand(w)), ex_.wrap(y));
  }
  void backward_data(FcKind k, const Operand& dy, const Parameter<T>& w, const Mat& dx) {
    layer(k).backward_data(dy, ex_.wrap_operand(weight_operand(w)), ex_.wrap(dx));
  }
  void backward_weight(FcKind k, const GemmOperand<T>& x, const Operand& dy, const Mat& dw,
                       bool accumulate) {
    layer(k).backward_weight(ex_.wrap_operand(x), dy, ex_.wrap(dw), accumulate);
  }

  // The forward pass with its output in the standard layout: through the layer's transposed
  // buffer and a re-layout when the layer gives it transposed.
  void forward_to_standard(FcKind k, const GemmOperand<T>& input, const Parameter<T>& w,
                           const Mat& output) {
    relayouts_.produce_into(plan(k).output(), Layout::standard, fc_outputs(shape_, k),
                            out_t_[index(k)], output,
                            [&](const Mat& y) { forward(k, input, w, y); });
  }
  // The input gradient in the standard layout, the same way.
  void backward_data_to_standard(FcKind k, const Operand& dy, const Parameter<T>& w,
                                 const Mat& dx) {
    relayouts_.produce_into(plan(k).input(), Layout::standard, fc_inputs(shape_, k),
                            in_t_[index(k)], dx, [&](const Mat& d) { backward_data(k, dy, w, d); });
  }
  // The gradient of layer k's output, dy (standard), as its backward GEMMs read it: in the
  // layout the layer gives its output, and in a bf16 run rounded once for both.
  Operand output_gradient(FcKind k, const Mat& dy) {
    return output_gradient_as_laid_out(
        k, relayouts_.in_layout(dy, plan(k).output(), fc_outputs(shape_, k), out_t_[index(k)]));
  }
  // The same of a gradient already in the layer's output layout.
  Operand output_gradient_as_laid_out(FcKind k, const Mat& dy) {
    return layer(k).output_gradient(ex_.wrap(dy));
  }

  // What the layers' GEMM plans hold.
  std::size_t workspace_bytes() const {
    std::size_t bytes = 0;
    for (const auto& l : layers_) bytes += l->workspace_bytes();
    return bytes;
  }

 private:
  static std::size_t index(FcKind k) { return static_cast<std::size_t>(k); }
  FcLayer<Exec>& layer(FcKind k) { return *layers_[index(k)]; }
  const FcLayer<Exec>& layer(FcKind k) const { return *layers_[index(k)]; }

  Exec& ex_;
  ModelShape shape_;
  ModelPlan plan_;
  Relayouts<Exec>& relayouts_;
  std::vector<std::unique_ptr<FcLayer<Exec>>> layers_;  // the block's FC layers in order
  std::vector<Mat> out_t_;  // a layer's output (and its gradient) when transposed
  std::vector<Mat> in_t_;   // a layer's input gradient when its input is transposed
};

}  // namespace meshslice
