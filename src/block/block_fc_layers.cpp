#include "block/block_fc_layers.hpp"

#include "block/block_module.hpp"
#include "core/errors.hpp"

namespace meshslice {

void FcLayerList::add_numbered(std::size_t in_module, const BlockFcLayer& layer) {
  MESHSLICE_ASSERT(count_ < kCapacity, "FcLayerList: FC layer ", layer.name, " is past the ",
                   kCapacity, " a block may have (FcLayerList::kCapacity)");
  MESHSLICE_ASSERT(count_ - module_first_ == in_module, "FcLayerList: FC layer ", layer.name,
                   " declared as its module's number ", in_module, " but added as number ",
                   count_ - module_first_);
  // The block's input is the residual stream: its first layer reads a norm of it.
  MESHSLICE_ASSERT(count_ > 0 || layer.input != BlockFcLayer::Input::previous,
                   "FcLayerList: the first FC layer, ", layer.name, ", has no previous layer");
  layers_[count_] = layer;
  layers_[count_].kind = FcKind(count_);
  layers_[count_].module = modules_ > 0 ? modules_ - 1 : 0;
  ++count_;
}

FcLayerList block_fc_layers(const BlockDims& d) {
  FcLayerList list;
  for (const BlockModuleSpec& spec : block_modules()) {
    list.begin_module();
    spec.add_fc_layers(d, list);
  }
  return list;
}

std::size_t block_fc_count() { return block_fc_layers({}).size(); }

std::string fc_layer_names() {
  std::string names;
  for (const BlockFcLayer& layer : block_fc_layers({}))
    names += concat(names.empty() ? "" : ", ", layer.name);
  return names;
}

double block_fc_weights(const BlockDims& dims) {
  double weights = 0;
  for (const BlockFcLayer& layer : block_fc_layers(dims))
    weights += static_cast<double>(layer.in) * static_cast<double>(layer.out);
  return weights;
}

const char* fc_name(FcKind kind) { return block_fc_layers({})[kind].name; }

FcKind parse_fc_kind(const std::string& name) {
  for (const BlockFcLayer& layer : block_fc_layers({}))
    if (name == layer.name) return layer.kind;
  throw UserError(
      concat("unknown FC layer '", name, "'; valid layers: ", fc_layer_names(), ", ", kLmHeadName));
}

std::vector<FcShape> block_chain(const FcLayerList& layers, bool attention_keeps_qkv_layout) {
  std::vector<FcShape> chain;
  for (const BlockFcLayer& layer : layers)
    chain.push_back(
        {layer.in, layer.out,
         layer.input == BlockFcLayer::Input::previous ||
             (layer.input == BlockFcLayer::Input::attention && attention_keeps_qkv_layout)});
  return chain;
}

}  // namespace meshslice
