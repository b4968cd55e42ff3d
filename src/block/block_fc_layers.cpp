#include "block/block_fc_layers.hpp"

#include "core/errors.hpp"

namespace meshslice {

std::array<BlockFcLayer, kFcKinds> block_fc_layers(const BlockDims& d) {
  using Input = BlockFcLayer::Input;
  const std::size_t kv = d.kv_hidden > 0 ? d.kv_hidden : d.hidden;
  const std::array<std::size_t, 3> qkv_parts{d.hidden, kv, kv};
  const std::array<std::size_t, 3> ff1_parts =
      mlp_gated(d.mlp) ? std::array<std::size_t, 3>{d.ffn, d.ffn, 0} : std::array<std::size_t, 3>{};
  return {{{FcKind::qkv, "qkv", d.hidden, d.qkv_outputs(), Input::norm, false, qkv_parts},
           {FcKind::attn_out, "attn_out", d.hidden, d.hidden, Input::attention, true, {}},
           {FcKind::ff1, "ff1", d.hidden, d.ff1_outputs(), Input::norm, false, ff1_parts},
           {FcKind::ff2, "ff2", d.ffn, d.hidden, Input::previous, true, {}}}};
}

double block_fc_weights(const BlockDims& dims) {
  double weights = 0;
  for (const BlockFcLayer& layer : block_fc_layers(dims))
    weights += static_cast<double>(layer.in) * static_cast<double>(layer.out);
  return weights;
}

const char* fc_name(FcKind kind) { return block_fc_layers({})[static_cast<int>(kind)].name; }

FcKind parse_fc_kind(const std::string& name) {
  for (const BlockFcLayer& layer : block_fc_layers({}))
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
