#include "block/block_fc_layers.hpp"

#include "block/block_module.hpp"
#include "core/errors.hpp"

namespace meshslice {

std::array<BlockFcLayer, kFcKinds> block_fc_layers(const BlockDims& d) {
  FcLayerList list;
  for (const BlockModuleSpec& module : block_modules()) module.add_fc_layers(d, list);
  MESHSLICE_ASSERT(list.count == kFcKinds, "block_fc_layers: the modules declare ", list.count,
                   " of ", kFcKinds, " FC layers");
  return list.layers;
}

double block_fc_weights(const BlockDims& dims) {
  double weights = 0;
  for (const BlockFcLayer& layer : block_fc_layers(dims))
    weights += static_cast<double>(layer.in) * static_cast<double>(layer.out);
  return weights;
}

const char* fc_name(FcKind kind) { return block_fc_layers({})[static_cast<int>(kind)].name; }

FcKind parse_fc_kind(const std::string& name) {
  std::string names;
  for (const BlockFcLayer& layer : block_fc_layers({})) {
    if (name == layer.name) return layer.kind;
    names += concat(layer.name, ", ");
  }
  throw UserError(concat("unknown FC layer '", name, "'; valid layers: ", names, kLmHeadName));
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
