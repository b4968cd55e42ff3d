#include "block/block_module.hpp"

#include <cstring>

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"

namespace meshslice {

const std::vector<BlockModuleSpec>& block_modules() {
  static const std::vector<BlockModuleSpec> modules = {attention_module_spec(), mlp_module_spec()};
  return modules;
}

std::size_t module_place(const BlockModuleSpec& module) {
  for (std::size_t m = 0; m < block_modules().size(); ++m)
    if (std::strcmp(block_modules()[m].name, module.name) == 0) return m;
  throw InternalError(concat("block_modules: module ", module.name, " is not in the list"));
}

std::size_t first_fc_layer(std::size_t module) {
  MESHSLICE_ASSERT(module < block_modules().size(), "first_fc_layer: no module ", module);
  // Listed once: which module adds each layer does not depend on the sizes.
  static const FcLayerList layers = block_fc_layers({});
  std::size_t earlier = 0;
  for (const BlockFcLayer& layer : layers) earlier += layer.module < module;
  return earlier;
}

BlockWork block_non_fc_work(const BlockShard& shard) {
  BlockWork work;
  for (const BlockModuleSpec& module : block_modules()) module.add_non_fc_work(shard, work);
  return work;
}

BlockSavedWidths block_saved_widths(const BlockDims& dims) {
  BlockSavedWidths w{2 * static_cast<double>(dims.hidden), 0, 0};
  for (const BlockModuleSpec& module : block_modules()) w += module.saved_widths(dims);
  return w;
}

}  // namespace meshslice
