#include "block/mlp_layers.hpp"

namespace meshslice {

namespace {

// ff1: H -> F from the norm of the residual stream (2F for a gated MLP, its gate and up
// projections together); ff2: F -> H from FF1's output through the activation, its layout kept.
void add_mlp_fc_layers(const BlockDims& d, FcLayerList& to) {
  using Input = BlockFcLayer::Input;
  const std::array<std::size_t, 3> ff1_parts =
      mlp_gated(d.mlp) ? std::array<std::size_t, 3>{d.ffn, d.ffn, 0} : std::array<std::size_t, 3>{};
  to.add(MlpFc::ff1, {"ff1", d.hidden, d.ff1_outputs(), Input::norm, false, ff1_parts});
  to.add(MlpFc::ff2, {"ff2", d.ffn, d.hidden, Input::previous, true, {}});
}

// FF1's input (H) and output, FF2's input (F).
BlockSavedWidths mlp_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden), ffn = static_cast<double>(dims.ffn);
  return {0, 0, h + ffn + static_cast<double>(dims.ff1_outputs())};
}

// norm2 and the residual add; the activation and its gradient.
void add_mlp_work(const BlockShard& s, BlockWork& to) {
  using namespace kernel_work;
  add_norm_and_residual(to, s.tokens * s.hidden);
  to.add(mlp_activation(s.mlp, s.ffn), mlp_activation_backward(s.mlp, s.ffn));
}

}  // namespace

const BlockModuleSpec& mlp_module_spec() {
  using Trains = ModuleLayer::Trains;
  // norm2 reads the residual stream between the halves; ff1 and ff2 their inputs; the
  // activation FF1's output.
  static const BlockModuleSpec spec = {"mlp",
                                       {{"norm2", true, Trains::gain},
                                        {"ff1", true, Trains::weight, int(MlpFc::ff1)},
                                        {"activation", true},
                                        {"ff2", true, Trains::weight, int(MlpFc::ff2)},
                                        {"ff_residual"}},
                                       add_mlp_fc_layers,
                                       mlp_saved_widths,
                                       add_mlp_work};
  return spec;
}

}  // namespace meshslice
