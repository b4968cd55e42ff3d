#pragma once
// What the block's MLP module declares (block/block_module.hpp): out = x_mid +
// ff2(act(ff1(norm2(x_mid)))), its layers, parameters, FC layers and saved widths. Its steps:
// model/modules/mlp.hpp; its activations: block/mlp_activations.hpp.
#include "block/block_module.hpp"

namespace meshslice {

// Its layers in forward order (their places in mlp_module_spec().layers), its FC layers
// in the order it adds them, and the parameters its layers train in their order.
enum class MlpLayer { norm, ff1, activation, ff2, residual };
enum class MlpFc { ff1, ff2 };
enum class MlpParam { norm_gain, ff1, ff2 };

const BlockModuleSpec& mlp_module_spec();
// The module whose FC layers and parameters these enums name (block_fc, block_param).
inline const BlockModuleSpec& module_declaring(MlpFc) { return mlp_module_spec(); }
inline const BlockModuleSpec& module_declaring(MlpParam) { return mlp_module_spec(); }

}  // namespace meshslice
