#pragma once
// What the block's attention module declares (block/block_module.hpp): x_mid = x_in +
// attn_out(attention(qkv(norm1(x_in)))), its layers, parameters, FC layers and saved widths.
// Its steps: model/modules/attention_module.hpp.
#include "block/block_module.hpp"

namespace meshslice {

// Its layers in forward order (their places in attention_module_spec().layers), its FC layers
// in the order it adds them, and the parameters its layers train in their order.
enum class AttentionLayer { norm, qkv, attention, out, residual };
enum class AttentionFc { qkv, out };
enum class AttentionParam { norm_gain, qkv, out };

const BlockModuleSpec& attention_module_spec();
// The module whose FC layers and parameters these enums name (block_fc, block_param).
inline const BlockModuleSpec& module_declaring(AttentionFc) { return attention_module_spec(); }
inline const BlockModuleSpec& module_declaring(AttentionParam) { return attention_module_spec(); }

}  // namespace meshslice
