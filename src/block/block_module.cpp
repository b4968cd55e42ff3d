#include "block/block_module.hpp"

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"

namespace meshslice {

void FcLayerList::add(const BlockFcLayer& layer) {
  MESHSLICE_ASSERT(count < layers.size() && layer.kind == static_cast<FcKind>(count),
                   "FcLayerList: FC layer ", layer.name, " declared as number ", count, " of ",
                   kFcKinds);
  layers[count++] = layer;
}

const std::vector<BlockModuleSpec>& block_modules() {
  static const std::vector<BlockModuleSpec> modules = {attention_module_spec(), mlp_module_spec()};
  return modules;
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
