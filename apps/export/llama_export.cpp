#include "llama_export.hpp"

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"
#include "model/block_layers.hpp"

namespace meshslice::exportapp {

std::string llama_incompatibility(const ModelShape& s) {
  if (s.vocab == 0)
    return "it is the teacher task's model (train.task = teacher), not a language model: Llama "
           "has a vocabulary (train.task = lm)";
  if (s.mlp != MlpKind::swiglu)
    return concat("its MLP is model.mlp = ", mlp_name(s.mlp),
                  ", Llama's is swiglu: train with model.mlp = swiglu");
  if (!s.rope)
    return "it has no position embedding (model.rope = false), Llama turns queries and keys by "
           "RoPE: train with model.rope = true";
  return "";
}

std::vector<ExportedTensor> llama_tensors(const ModelShape& s) {
  const std::size_t H = s.hidden, KV = s.kv_hidden(), F = s.ffn(), V = s.vocab;
  std::vector<ExportedTensor> out;
  out.push_back({"model.embed_tokens.weight", lm_parameter_name(LmParam::embedding), 0, H});
  for (std::size_t b = 0; b < s.blocks; ++b) {
    const std::string layer = concat("model.layers.", b, ".");
    const auto weight = [&](auto param) { return parameter_name(b, block_param(param)); };
    out.push_back(
        {layer + "input_layernorm.weight", weight(AttentionParam::norm_gain), 0, H, false, true});
    const std::string qkv = weight(AttentionParam::qkv);
    out.push_back({layer + "self_attn.q_proj.weight", qkv, 0, H, true});
    out.push_back({layer + "self_attn.k_proj.weight", qkv, H, KV, true});
    out.push_back({layer + "self_attn.v_proj.weight", qkv, H + KV, KV, true});
    out.push_back({layer + "self_attn.o_proj.weight", weight(AttentionParam::out), 0, H, true});
    out.push_back({layer + "post_attention_layernorm.weight", weight(MlpParam::norm_gain), 0, H,
                   false, true});
    out.push_back({layer + "mlp.gate_proj.weight", weight(MlpParam::ff1), 0, F, true});
    out.push_back({layer + "mlp.up_proj.weight", weight(MlpParam::ff1), F, F, true});
    out.push_back({layer + "mlp.down_proj.weight", weight(MlpParam::ff2), 0, H, true});
  }
  out.push_back(
      {"model.norm.weight", lm_parameter_name(LmParam::final_norm_gain), 0, H, false, true});
  if (!s.tied_head)
    out.push_back({"lm_head.weight", lm_parameter_name(LmParam::lm_head), 0, V, true});
  return out;
}

json::Value llama_config(const ModelShape& s, const std::string& torch_dtype) {
  json::Value c = json::Value::object();
  json::Value architectures = json::Value::array();
  architectures.push_back("LlamaForCausalLM");
  c.set("architectures", architectures);
  c.set("model_type", "llama");
  c.set("hidden_size", s.hidden);
  c.set("intermediate_size", s.ffn());
  c.set("num_hidden_layers", s.blocks);
  c.set("num_attention_heads", s.heads);
  c.set("num_key_value_heads", s.kv());
  c.set("head_dim", s.head_dim());
  c.set("vocab_size", s.vocab);
  c.set("max_position_embeddings", s.seq_len);
  c.set("hidden_act", "silu");
  c.set("rms_norm_eps", kRmsNormEpsilon);
  c.set("rope_theta", kRopeBase);
  c.set("attention_bias", false);
  c.set("mlp_bias", false);
  c.set("tie_word_embeddings", s.tied_head);
  c.set("torch_dtype", torch_dtype);
  c.set("initializer_range", 0.02);
  return c;
}

}  // namespace meshslice::exportapp
