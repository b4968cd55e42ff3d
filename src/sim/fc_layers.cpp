#include "sim/fc_layers.hpp"

#include "core/errors.hpp"

namespace meshslice::sim {

const LlmSpec& gpt3() {
  static const LlmSpec spec{"gpt3", "GPT-3 175B", 12288, 96};
  return spec;
}

const LlmSpec& megatron_nlg() {
  static const LlmSpec spec{"megatron-nlg", "Megatron-NLG 530B", 20480, 128};
  return spec;
}

const LlmSpec& llm_by_name(const std::string& name) {
  for (const LlmSpec* spec : {&gpt3(), &megatron_nlg()})
    if (spec->name == name) return *spec;
  throw UserError(concat("unknown model '", name, "'; valid models: gpt3, megatron-nlg"));
}

std::vector<FcLayer> transformer_fc_layers(const LlmSpec& llm) {
  const std::size_t h = llm.hidden;
  return {{"qkv", h, 3 * h}, {"attn_out", h, h}, {"ff1", h, 4 * h}, {"ff2", 4 * h, h}};
}


std::vector<FcGemm> block_gemms(const LlmSpec& llm, std::size_t tokens) {
  const auto layers = transformer_fc_layers(llm);
  // Transposition flags along the block (see the header): qkv -> attention -> attn_out ->
  // residual add (untransposed again) -> ff1 -> ff2.
  std::vector<bool> flag(layers.size());
  bool input_transposed = false;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].name == "ff1") input_transposed = false;  // after the residual add
    const bool w_stationary =
        choose_stationary(tokens, layers[i].in, layers[i].out) == Stationary::W;
    flag[i] = input_transposed != w_stationary;
    input_transposed = flag[i];
  }
  std::vector<FcGemm> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Stationary s = choose_stationary(tokens, layers[i].in, layers[i].out);
    const auto problems = fc_layer_gemms(s, tokens, layers[i].in, layers[i].out);
    for (int pass = 0; pass < 3; ++pass)
      out.push_back({layers[i].name, pass_name(static_cast<Pass>(pass)), s, bool(flag[i]),
                     flag[i] ? transposed(problems[pass]) : problems[pass]});
  }
  return out;
}

}  // namespace meshslice::sim
