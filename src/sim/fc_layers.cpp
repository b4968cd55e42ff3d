#include "sim/fc_layers.hpp"

#include "core/errors.hpp"

namespace meshslice::sim {

const LlmSpec& gpt3() {
  static const LlmSpec spec{"gpt3", "GPT-3 175B", 12288, 96, 96};
  return spec;
}

const LlmSpec& megatron_nlg() {
  static const LlmSpec spec{"megatron-nlg", "Megatron-NLG 530B", 20480, 128, 105};
  return spec;
}

const LlmSpec& llm_by_name(const std::string& name) {
  for (const LlmSpec* spec : {&gpt3(), &megatron_nlg()})
    if (spec->name == name) return *spec;
  throw UserError(concat("unknown model '", name, "'; valid models: gpt3, megatron-nlg"));
}

namespace {

// The layers of one of the model's blocks.
FcLayerList layers_of(const LlmSpec& llm) { return block_fc_layers(llm.dims()); }

// The GEMMs of a block whose layers take `flows`, three per layer.
std::vector<FcGemm> gemms_of(const LlmSpec& llm, std::size_t tokens,
                             const std::vector<FcDataflow>& flows) {
  const auto layers = layers_of(llm);
  std::vector<FcGemm> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto problems = fc_layer_gemms(flows[i].stationary, tokens, layers[i].in, layers[i].out);
    for (int pass = 0; pass < 3; ++pass)
      out.push_back({layers[i].name, pass_name(static_cast<Pass>(pass)), flows[i].stationary,
                     flows[i].transposed,
                     flows[i].transposed ? transposed(problems[pass]) : problems[pass]});
  }
  return out;
}

}  // namespace

std::vector<FcGemm> block_gemms(const LlmSpec& llm, std::size_t tokens, AttentionLayout attention) {
  return gemms_of(llm, tokens,
                  choose_dataflows(tokens, block_chain(layers_of(llm),
                                                       attention == AttentionLayout::follows_qkv)));
}

std::vector<FcGemm> lm_head_gemms(std::size_t hidden, std::size_t vocab, std::size_t tokens) {
  const Stationary stationary = choose_standard_stationary(hidden, vocab);
  const auto problems = fc_layer_gemms(stationary, tokens, hidden, vocab);
  std::vector<FcGemm> out;
  for (int pass = 0; pass < 3; ++pass)
    out.push_back(
        {kLmHeadName, pass_name(static_cast<Pass>(pass)), stationary, false, problems[pass]});
  return out;
}

std::vector<FcGemm> y_stationary_block_gemms(const LlmSpec& llm, std::size_t tokens) {
  return gemms_of(llm, tokens, std::vector<FcDataflow>(block_fc_count()));
}

}  // namespace meshslice::sim
