#include "block/block_fc_layers.hpp"

#include "core/errors.hpp"

namespace meshslice {

std::array<BlockFcLayer, kFcKinds> block_fc_layers(std::size_t hidden, std::size_t ffn) {
  using Input = BlockFcLayer::Input;
  return {{{FcKind::qkv, "qkv", hidden, 3 * hidden, Input::norm},
           {FcKind::attn_out, "attn_out", hidden, hidden, Input::attention},
           {FcKind::ff1, "ff1", hidden, ffn, Input::norm},
           {FcKind::ff2, "ff2", ffn, hidden, Input::previous}}};
}

double block_fc_weights(std::size_t hidden, std::size_t ffn) {
  double weights = 0;
  for (const BlockFcLayer& layer : block_fc_layers(hidden, ffn))
    weights += static_cast<double>(layer.in) * static_cast<double>(layer.out);
  return weights;
}

const char* fc_name(FcKind kind) { return block_fc_layers(0, 0)[static_cast<int>(kind)].name; }

FcKind parse_fc_kind(const std::string& name) {
  for (const BlockFcLayer& layer : block_fc_layers(0, 0))
    if (name == layer.name) return layer.kind;
  throw UserError(concat("unknown FC layer '", name, "'; valid layers: qkv, attn_out, ff1, ff2, ",
                         kLmHeadName));
}

std::vector<FcShape> block_chain(const std::array<BlockFcLayer, kFcKinds>& layers,
                                 bool attention_keeps_qkv_layout) {
  std::vector<FcShape> chain;
  for (const BlockFcLayer& layer : layers)
    chain.push_back(
        {layer.in, layer.out,
         layer.input == BlockFcLayer::Input::previous ||
             (layer.input == BlockFcLayer::Input::attention && attention_keeps_qkv_layout)});
  return chain;
}

}  // namespace meshslice
