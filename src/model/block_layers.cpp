#include "model/block_layers.hpp"

namespace meshslice {

const std::vector<BlockLayerSpec>& block_layers() {
  using A = Activation;
  static const std::vector<BlockLayerSpec> layers = {
      {BlockLayer::norm1, "norm1", true, ParamKind::norm1_gain, {A::x_in, A::rinv1}},
      {BlockLayer::qkv, "qkv", true, ParamKind::qkv, {A::qkv_in}},
      {BlockLayer::attention, "attention", false, {}, {A::qkv, A::probs, A::attn}},
      {BlockLayer::attn_out, "attn_out", true, ParamKind::attn_out, {A::attn_out_in}},
      {BlockLayer::attn_residual, "attn_residual", false, {}, {}},
      {BlockLayer::norm2, "norm2", true, ParamKind::norm2_gain, {A::x_mid, A::rinv2}},
      {BlockLayer::ff1, "ff1", true, ParamKind::ff1, {A::ff1_in}},
      {BlockLayer::activation, "activation", false, {}, {A::ff1_out}},
      {BlockLayer::ff2, "ff2", true, ParamKind::ff2, {A::ff2_in}},
      {BlockLayer::ff_residual, "ff_residual", false, {}, {}},
  };
  return layers;
}

std::size_t recomputed_layers() {
  std::size_t last_saving = 0;
  for (std::size_t i = 0; i < block_layers().size(); ++i)
    if (!block_layers()[i].saves.empty()) last_saving = i;
  return last_saving;
}

std::array<ParamKind, kParamKinds> gradient_order() {
  std::array<ParamKind, kParamKinds> order{};
  std::size_t n = 0;
  for (auto layer = block_layers().rbegin(); layer != block_layers().rend(); ++layer)
    if (layer->trains) order[n++] = layer->param;
  return order;
}

}  // namespace meshslice
