#include "block/attention_layers.hpp"

namespace meshslice {

namespace {

// qkv: H -> H + 2 KV, Q, K and V together from the norm of the residual stream (KV = H, or
// kv_heads x head size with grouped-query attention); attn_out: H -> H, from attention's output.
void add_attention_fc_layers(const BlockDims& d, FcLayerList& to) {
  using Input = BlockFcLayer::Input;
  const std::size_t kv = d.kv_hidden > 0 ? d.kv_hidden : d.hidden;
  to.add({FcKind::qkv, "qkv", d.hidden, d.qkv_outputs(), Input::norm, false, {d.hidden, kv, kv}});
  to.add({FcKind::attn_out, "attn_out", d.hidden, d.hidden, Input::attention, true, {}});
}

// Its output (kept), attn_out's input, QKV's input and output (attention's input, K and V
// repeated per query head: 3H).
BlockSavedWidths attention_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden);
  return {h, h, h + 3 * h};
}

}  // namespace

const BlockModuleSpec& attention_module_spec() {
  using Trains = ModuleLayer::Trains;
  // norm1 reads the block's input and its reciprocal RMS; qkv its input; attention q, k, v, its
  // log-sum-exps and output; attn_out its input.
  static const BlockModuleSpec spec = {"attention",
                                       {{"norm1", true, Trains::gain},
                                        {"qkv", true, Trains::weight, FcKind::qkv},
                                        {"attention", true},
                                        {"attn_out", true, Trains::weight, FcKind::attn_out},
                                        {"attn_residual"}},
                                       add_attention_fc_layers,
                                       attention_saved_widths};
  return spec;
}

}  // namespace meshslice
