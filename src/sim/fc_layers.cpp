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

const char* stationary_name(Stationary s) {
  switch (s) {
    case Stationary::Y: return "Y-stn";
    case Stationary::X: return "X-stn";
    case Stationary::W: return "W-stn";
  }
  return "?";
}

std::vector<FcLayer> transformer_fc_layers(const LlmSpec& llm) {
  const std::size_t h = llm.hidden;
  return {{"qkv", h, 3 * h}, {"attn_out", h, h}, {"ff1", h, 4 * h}, {"ff2", 4 * h, h}};
}

Stationary choose_stationary(std::size_t tokens, std::size_t in, std::size_t out) {
  // Comparing T x I, I x O and T x O is comparing T, O and I pairwise.
  if (out >= in && tokens >= in) return Stationary::Y;  // Y is the largest
  if (in >= out && tokens >= out) return Stationary::X;
  return Stationary::W;
}

namespace {

// Table 1, untransposed, for T tokens and the layer's I and O.
void table1(Stationary s, std::size_t T, std::size_t I, std::size_t O, GemmProblem out[3]) {
  switch (s) {
    case Stationary::Y:
      out[0] = {Dataflow::OS, T, O, I};  // Y = X W
      out[1] = {Dataflow::LS, T, I, O};  // X' = Y' W^T
      out[2] = {Dataflow::RS, I, O, T};  // W' = X^T Y'
      return;
    case Stationary::X:
      out[0] = {Dataflow::LS, T, O, I};  // Y = X (W^T)^T
      out[1] = {Dataflow::OS, T, I, O};  // X' = Y' W^T
      out[2] = {Dataflow::RS, O, I, T};  // W'^T = Y'^T X
      return;
    case Stationary::W:
      out[0] = {Dataflow::RS, T, O, I};  // Y = (X^T)^T W
      out[1] = {Dataflow::LS, I, T, O};  // X'^T = W Y'^T
      out[2] = {Dataflow::OS, I, O, T};  // W' = X^T Y'
      return;
  }
}

// C^T = (A B)^T etc.: OS stays OS, LS and RS swap, and so do M and N.
GemmProblem transposed(const GemmProblem& p) {
  const Dataflow flow = p.flow == Dataflow::OS   ? Dataflow::OS
                        : p.flow == Dataflow::LS ? Dataflow::RS
                                                 : Dataflow::LS;
  return {flow, p.N, p.M, p.K};
}

}  // namespace

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
  static const char* passes[] = {"fwd", "bwd_data", "bwd_weight"};
  std::vector<FcGemm> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Stationary s = choose_stationary(tokens, layers[i].in, layers[i].out);
    GemmProblem problems[3];
    table1(s, tokens, layers[i].in, layers[i].out, problems);
    for (int pass = 0; pass < 3; ++pass)
      out.push_back({layers[i].name, passes[pass], s, bool(flag[i]),
                     flag[i] ? transposed(problems[pass]) : problems[pass]});
  }
  return out;
}

}  // namespace meshslice::sim
