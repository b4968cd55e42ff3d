#include "model/block_layers.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace meshslice {

const std::vector<BlockLayerSpec>& block_layers() {
  static const std::vector<BlockLayerSpec> layers = [] {
    std::vector<BlockLayerSpec> all;
    int params = 0;
    for (std::size_t m = 0; m < block_modules().size(); ++m) {
      const std::vector<ModuleLayer>& declared = block_modules()[m].layers;
      for (std::size_t l = 0; l < declared.size(); ++l) {
        const ModuleLayer& layer = declared[l];
        BlockLayerSpec spec{m, int(l), layer.name, {}, layer.reads_saved};
        if (layer.trains != ModuleLayer::Trains::nothing)
          spec.param = BlockParam{ParamKind(params++), layer.trains == ModuleLayer::Trains::gain,
                                  FcKind(first_fc_layer(m) + static_cast<std::size_t>(layer.fc))};
        all.push_back(spec);
      }
    }
    // param_stream seeds eight parameters per block.
    MESHSLICE_ASSERT(params <= 8, "block_layers: the modules declare ", params,
                     " parameters, more than the seeding's eight per block");
    return all;
  }();
  return layers;
}

const std::vector<ParamKind>& block_param_kinds() {
  static const std::vector<ParamKind> kinds = [] {
    std::vector<ParamKind> all;
    for (const BlockLayerSpec& layer : block_layers())
      if (layer.param) all.push_back(layer.param->kind);
    return all;
  }();
  return kinds;
}

std::size_t block_param_count() { return block_param_kinds().size(); }

const BlockLayerSpec& layer_training(ParamKind kind) {
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.param && layer.param->kind == kind) return layer;
  throw InternalError(concat("block_layers: no layer trains parameter kind ", int(kind)));
}

std::size_t first_parameter(std::size_t module) {
  std::size_t params = 0;
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.module < module && layer.param) ++params;
  return params;
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
  const BlockFcLayer layer = block_fc_layers(s.dims())[p.fc];
  return {layer.in, layer.out};
}

double parameter_std(const ModelShape& s, ParamKind kind) {
  const BlockParam& p = *layer_training(kind).param;
  if (p.gain) return 0.0;
  const BlockFcLayer layer = block_fc_layers(s.dims())[p.fc];
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

std::vector<ParamKind> gradient_order() {
  return {block_param_kinds().rbegin(), block_param_kinds().rend()};
}

std::vector<bool> normed_offers(const std::vector<NormedUse>& uses) {
  std::vector<bool> offered(uses.size());
  bool later_writes = false;
  for (std::size_t m = uses.size(); m-- > 0;) {
    offered[m] = !later_writes;
    later_writes = later_writes || uses[m] == NormedUse::stages ||
                   (offered[m] && uses[m] == NormedUse::keeps_if_offered);
  }
  return offered;
}

}  // namespace meshslice
