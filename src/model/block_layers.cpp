#include "model/block_layers.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace meshslice {

const std::vector<BlockLayerSpec>& block_layers() {
  using K = ParamKind;
  const auto gain = [](ParamKind kind) { return BlockParam{kind, true, FcKind::qkv}; };
  const auto weight = [](ParamKind kind, FcKind fc) { return BlockParam{kind, false, fc}; };
  static const std::vector<BlockLayerSpec> layers = {
      // norm1 reads the block's input and its reciprocal RMS; qkv its input; attention q, k, v,
      // its log-sum-exps and output; attn_out its input.
      {BlockLayer::norm1, "norm1", gain(K::norm1_gain), true},
      {BlockLayer::qkv, "qkv", weight(K::qkv, FcKind::qkv), true},
      {BlockLayer::attention, "attention", {}, true},
      {BlockLayer::attn_out, "attn_out", weight(K::attn_out, FcKind::attn_out), true},
      {BlockLayer::attn_residual, "attn_residual", {}, false},
      // norm2 reads the residual stream between the halves; ff1 and ff2 their inputs; the
      // activation FF1's output.
      {BlockLayer::norm2, "norm2", gain(K::norm2_gain), true},
      {BlockLayer::ff1, "ff1", weight(K::ff1, FcKind::ff1), true},
      {BlockLayer::activation, "activation", {}, true},
      {BlockLayer::ff2, "ff2", weight(K::ff2, FcKind::ff2), true},
      {BlockLayer::ff_residual, "ff_residual", {}, false},
  };
  return layers;
}

const BlockLayerSpec& layer_training(ParamKind kind) {
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.param && layer.param->kind == kind) return layer;
  throw InternalError(concat("block_layers: no layer trains parameter kind ", int(kind)));
}

std::string param_kind_name(ParamKind kind) {
  const BlockLayerSpec& layer = layer_training(kind);
  return concat(layer.name, layer.param->gain ? "_gain" : "");
}

std::string parameter_name(std::size_t block, ParamKind kind) {
  const BlockLayerSpec& layer = layer_training(kind);
  return concat("blocks.", block, ".", layer.name, layer.param->gain ? ".gain" : ".weight");
}

bool is_gain(ParamKind kind) { return layer_training(kind).param->gain; }

ParamShape param_shape(const ModelShape& s, ParamKind kind) {
  const BlockParam& p = *layer_training(kind).param;
  if (p.gain) return {1, s.hidden};
  const BlockFcLayer layer = block_fc_layers(s.dims())[static_cast<int>(p.fc)];
  return {layer.in, layer.out};
}

double parameter_std(const ModelShape& s, ParamKind kind) {
  const BlockParam& p = *layer_training(kind).param;
  if (p.gain) return 0.0;
  const BlockFcLayer layer = block_fc_layers(s.dims())[static_cast<int>(p.fc)];
  double std_dev = 1.0 / std::sqrt(static_cast<double>(layer.in));
  if (layer.adds_to_residual) std_dev /= std::sqrt(2.0 * static_cast<double>(s.blocks));
  return std_dev;
}

std::size_t recomputed_layers() {
  std::size_t last_reading = 0;
  for (std::size_t i = 0; i < block_layers().size(); ++i)
    if (block_layers()[i].reads_saved) last_reading = i;
  return last_reading;
}

std::array<ParamKind, kParamKinds> gradient_order() {
  std::array<ParamKind, kParamKinds> order{};
  std::size_t n = 0;
  for (auto layer = block_layers().rbegin(); layer != block_layers().rend(); ++layer)
    if (layer->param) order[n++] = layer->param->kind;
  return order;
}

}  // namespace meshslice
