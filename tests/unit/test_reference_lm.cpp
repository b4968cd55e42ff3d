// The serial reference language model (model/reference_lm.hpp): its hand-written backward pass
// against finite differences of its loss, for every parameter (the embedding, the blocks with
// RoPE, the final norm's gain, the head), untied and tied; and the loss a uniform guess gives.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "finite_differences.hpp"
#include "model/block_layers.hpp"
#include "model/counter_random.hpp"
#include "model/reference_lm.hpp"

namespace meshslice {
namespace {

ModelShape tiny_lm(bool tied) {
  ModelShape s;
  s.hidden = 8;
  s.heads = 2;
  s.blocks = 1;
  s.seq_len = 4;
  s.sequences = 2;
  s.rope = true;
  s.vocab = 11;
  s.tied_head = tied;
  return s;
}

// Every parameter moved off its initial value (gains of 1 would hide a missing multiplication).
void perturb(std::vector<double>& values, std::uint64_t stream, double scale) {
  for (std::size_t e = 0; e < values.size(); ++e)
    values[e] += scale * counter_normal(78, stream, e, 0);
}

std::vector<int> ids_of(std::size_t n, std::size_t vocab, std::size_t salt) {
  std::vector<int> ids(n);
  for (std::size_t t = 0; t < n; ++t) ids[t] = static_cast<int>((t * 7 + salt) % vocab);
  return ids;
}

class ReferenceLmGradients : public ::testing::TestWithParam<bool> {};  // tied

TEST_P(ReferenceLmGradients, MatchFiniteDifferences) {
  const ModelShape s = tiny_lm(GetParam());
  ReferenceLm<double> lm(s, 21);
  perturb(lm.param(LmParam::embedding), 1, 0.5);
  perturb(lm.param(LmParam::final_norm_gain), 2, 0.3);
  if (!s.tied_head) perturb(lm.param(LmParam::lm_head), 3, 0.5);
  for (ParamKind kind : block_param_kinds())
    perturb(lm.blocks().param(0, kind), 10 + static_cast<std::uint64_t>(kind), 0.2);
  const std::vector<int> ids = ids_of(s.tokens(), s.vocab, 1);
  const std::vector<int> targets = ids_of(s.tokens(), s.vocab, 4);
  lm.loss_and_gradients(ids, targets);
  const auto loss = [&] { return lm.loss(ids, targets); };
  expect_gradient(lm.gradient(LmParam::embedding), lm.param(LmParam::embedding), loss, "embedding");
  expect_gradient(lm.gradient(LmParam::final_norm_gain), lm.param(LmParam::final_norm_gain), loss,
                  "final norm gain");
  if (!s.tied_head)
    expect_gradient(lm.gradient(LmParam::lm_head), lm.param(LmParam::lm_head), loss, "head");
  for (ParamKind kind : block_param_kinds())
    expect_gradient(lm.blocks().gradient(0, kind), lm.blocks().param(0, kind), loss,
                    param_kind_name(kind));
}

INSTANTIATE_TEST_SUITE_P(Head, ReferenceLmGradients, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "tied" : "untied"; });

TEST(ReferenceLm, UniformLogitsCostLogVocabulary) {
  ModelShape s = tiny_lm(false);
  ReferenceLm<double> lm(s, 21);
  for (double& w : lm.param(LmParam::lm_head)) w = 0;  // every logit 0: a uniform guess
  const std::vector<int> ids = ids_of(s.tokens(), s.vocab, 1);
  EXPECT_NEAR(lm.loss(ids, ids_of(s.tokens(), s.vocab, 2)), std::log(double(s.vocab)), 1e-12);
  ReferenceLm<double> tied(tiny_lm(true), 21);
  EXPECT_THROW(tied.param(LmParam::lm_head), UserError);  // the embedding is its head
}

}  // namespace
}  // namespace meshslice
