#pragma once
// What the block's attention module declares (block/block_module.hpp): x_mid = x_in +
// attn_out(attention(qkv(norm1(x_in)))), its layers, parameters, FC layers and saved widths.
// Its steps: model/modules/attention_module.hpp.
#include "block/block_module.hpp"

namespace meshslice {

// Its layers in forward order (their places in attention_module_spec().layers).
enum class AttentionLayer { norm, qkv, attention, out, residual };

const BlockModuleSpec& attention_module_spec();

}  // namespace meshslice
