#include "block/attention_layers.hpp"

namespace meshslice {

namespace {

// qkv: H -> H + 2 KV, Q, K and V together from the norm of the residual stream (KV = H, or
// kv_heads x head size with grouped-query attention); attn_out: H -> H, from attention's output.
void add_attention_fc_layers(const BlockDims& d, FcLayerList& to) {
  using Input = BlockFcLayer::Input;
  const std::size_t kv = d.kv_hidden > 0 ? d.kv_hidden : d.hidden;
  to.add(AttentionFc::qkv,
         {"qkv", d.hidden, d.qkv_outputs(), Input::norm, false, {d.hidden, kv, kv}});
  to.add(AttentionFc::out, {"attn_out", d.hidden, d.hidden, Input::attention, true, {}});
}

// Its output (kept), attn_out's input, QKV's input and output (attention's input, K and V
// repeated per query head: 3H).
BlockSavedWidths attention_saved_widths(const BlockDims& dims) {
  const double h = static_cast<double>(dims.hidden);
  return {h, h, h + 3 * h};
}

// norm1 and the residual add; grouped, K and V repeated per query head and their gradients
// summed back (model/kernels/grouped_query.hpp); attention's passes.
void add_attention_work(const BlockShard& s, BlockWork& to) {
  using namespace kernel_work;
  add_norm_and_residual(to, s.tokens * s.hidden);
  if (s.kv_hidden < s.hidden) {
    const double wide = s.tokens * 3 * s.hidden, narrow = s.tokens * (s.hidden + 2 * s.kv_hidden);
    to.add(repeat_kv(wide), sum_kv(wide, narrow));
  }
  to.add(s.attention.forward_work(), s.attention.backward_work());
}

}  // namespace

const BlockModuleSpec& attention_module_spec() {
  using Trains = ModuleLayer::Trains;
  // norm1 reads the block's input and its reciprocal RMS; qkv its input; attention q, k, v, its
  // log-sum-exps and output; attn_out its input.
  static const BlockModuleSpec spec = {"attention",
                                       {{"norm1", true, Trains::gain},
                                        {"qkv", true, Trains::weight, int(AttentionFc::qkv)},
                                        {"attention", true},
                                        {"attn_out", true, Trains::weight, int(AttentionFc::out)},
                                        {"attn_residual"}},
                                       add_attention_fc_layers,
                                       attention_saved_widths,
                                       add_attention_work};
  return spec;
}

}  // namespace meshslice
