#include "model/model_config.hpp"

#include <cmath>

#include "block/block_fc_layers.hpp"
#include "block/block_module.hpp"
#include "core/errors.hpp"
#include "model/block_layers.hpp"

namespace meshslice {

const char* lm_parameter_name(LmParam param) {
  switch (param) {
    case LmParam::embedding: return "embedding.weight";
    case LmParam::final_norm_gain: return "final_norm.gain";
    case LmParam::lm_head: return "lm_head.weight";
  }
  return "?";
}

ParamShape lm_param_shape(const ModelShape& s, LmParam param) {
  switch (param) {
    case LmParam::embedding: return {s.vocab, s.hidden};
    case LmParam::final_norm_gain: return {1, s.hidden};
    case LmParam::lm_head: return {s.hidden, s.vocab};
  }
  return {};
}

double lm_param_std(const ModelShape& s, LmParam param) {
  switch (param) {
    // Untied, the first norm scales the embedding whatever its size. Tied, the same table makes
    // the logits, which at std 1 would start near 100 nats: 1/sqrt(H) gives them unit variance
    // from a normed input, as the untied head's.
    case LmParam::embedding:
      return s.tied_head ? 1.0 / std::sqrt(static_cast<double>(s.hidden)) : 1.0;
    case LmParam::final_norm_gain: return 0.0;
    case LmParam::lm_head: return 1.0 / std::sqrt(static_cast<double>(s.hidden));
  }
  return 0.0;
}

std::size_t model_parameter_order(std::size_t block, ParamKind kind) {
  return 1 + block * block_param_count() + static_cast<std::size_t>(kind);
}

std::size_t model_parameter_order(const ModelShape& s, LmParam param) {
  if (param == LmParam::embedding) return 0;
  return model_parameter_order(s.blocks, ParamKind(0)) + (param == LmParam::lm_head ? 1 : 0);
}

std::string model_parameter_name(const ModelShape& s, std::size_t order) {
  if (order == 0) return lm_parameter_name(LmParam::embedding);
  const std::size_t after_blocks = model_parameter_order(s.blocks, ParamKind(0));
  if (order < after_blocks)
    return parameter_name((order - 1) / block_param_count(),
                          ParamKind((order - 1) % block_param_count()));
  return lm_parameter_name(order == after_blocks ? LmParam::final_norm_gain : LmParam::lm_head);
}

std::vector<std::pair<std::string, ParamShape>> model_tensors(const ModelShape& m) {
  std::vector<std::pair<std::string, ParamShape>> out;
  const auto add = [&](LmParam p) { out.emplace_back(lm_parameter_name(p), lm_param_shape(m, p)); };
  if (m.vocab > 0) add(LmParam::embedding);
  for (std::size_t b = 0; b < m.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      out.emplace_back(parameter_name(b, kind), param_shape(m, kind));
  if (m.vocab > 0) add(LmParam::final_norm_gain);
  if (m.vocab > 0 && !m.tied_head) add(LmParam::lm_head);
  return out;
}

double block_flops(const ModelShape& m) {
  const double t = static_cast<double>(m.tokens()), h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(m.seq_len), b = static_cast<double>(m.sequences);
  // Three GEMMs of 2 FLOPs per multiply-add for each weight and token; attention's two.
  return 6 * t * block_fc_weights(m.dims()) + 12 * b * s * s * h;
}

double minimum_memory_bytes(const ModelShape& shape, std::size_t chips, OptimizerKind optimizer,
                            std::size_t scalar_bytes, AttentionKernel attention, bool bf16) {
  const double t = static_cast<double>(shape.tokens());
  const double weights = block_fc_weights(shape.dims()) * shape.blocks / chips;
  const double states = optimizer_states_per_weight(optimizer);
  // Kept per block (block/block_module.hpp), attn_out's input left out (it may be attention's
  // output): 16 T H for GeLU, of which QKV's, FF1's and FF2's inputs and QKV's and FF1's outputs
  // in bf16 in a bf16 run.
  const BlockSavedWidths saved = block_saved_widths(shape.dims());
  const double activations = t * (saved.kept + saved.in_bf16);
  const double in_bf16 = t * saved.in_bf16;
  const double s = static_cast<double>(shape.seq_len);
  const double attention_kept = attention == AttentionKernel::fused
                                    ? t * shape.heads  // a log-sum-exp per query row and head
                                    : shape.sequences * shape.heads * s * s / 2;
  const double per_block =
      (activations + attention_kept) * scalar_bytes - (bf16 ? in_bf16 * (scalar_bytes - 2.0) : 0.0);
  return (3 + states) * weights * scalar_bytes + per_block * shape.blocks / chips;
}

}  // namespace meshslice
