// A language model trained on the mesh against the serial reference (model/reference_lm.hpp) on
// the same token dataset: every step's loss and gradient norm, the held-out loss and the final
// weights (embedding, blocks with RoPE, final gain, head) to 1e-9 in double; a vocabulary that
// does not divide the mesh, tied and untied heads, micro-batches, ZeRO-1, dp and pipeline
// stages (the embedding on the first, the head on the last), and a head kept as W^T.
#include <gtest/gtest.h>
#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

#include "exec/real_executor.hpp"
#include "lm_reference.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

OptimizerSettings adamw() { return test_adamw(2, 8); }

struct Case {
  std::string name;
  bool tied = false;
  std::size_t micro_batches = 1;
  bool zero = false;
  std::string head;  // the head's plan entry; "" = the default (Y-stationary, X when tied)
  std::string optimizer = "adamw";
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class LanguageModelMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(LanguageModelMatchesReference, StepsHeldOutLossAndFinalWeights) {
  const Case& c = GetParam();
  const int dp = torus().size(Axis::dp), pp = torus().size(Axis::pp);
  if (c.tied && pp > 1) GTEST_SKIP() << "a tied head needs the first and last block together";
  const ModelShape shape = test_lm_shape(8, c.tied);
  OptimizerSettings opt = adamw();
  opt.kind = parse_optimizer(c.optimizer);
  const TaskSeeds seeds{11, 12, 13};
  StepSettings step;
  step.micro_batches = c.micro_batches;
  step.zero = c.zero;
  const TokenDataset dataset;
  const data::TokenSamples samples = dataset.samples(shape.seq_len);
  ModelPlan plan = default_model_plan(shape, {Algorithm::meshslice, {2, 1}});
  if (!c.head.empty()) parse_fc_plan(c.head, *plan.lm_head);
  RealExecutor<double> ex(torus(), CommOptions{});
  Trainer<RealExecutor<double>> trainer(ex, shape, plan, opt, seeds, step, nullptr, &samples);
  ReferenceLm<double> reference(shape, seeds.student);
  const std::size_t sequences = shape.sequences * static_cast<std::size_t>(dp);
  expect_lm_steps(trainer, reference, samples, opt, sequences, 0, 8, c.name);
  if (HasFatalFailure()) return;
  std::vector<int> ids, targets;
  double held_out = 0;
  for (std::size_t b = 0; b < 2; ++b) {
    global_batch(samples, data::Split::held_out, b, sequences, shape.seq_len, ids, targets);
    held_out += reference.loss(ids, targets) / 2;
  }
  EXPECT_NEAR(trainer.eval_loss(2), held_out, 1e-9 * held_out) << c.name;
  expect_lm_weights(trainer.student(), reference, c.name);
  // Greedy and sampled decoding past a window of seq_len tokens, as the reference decodes.
  const std::vector<int> prompt{3, 1, 4, 1, 5};
  for (const TokenSampling& sampling : {TokenSampling{}, TokenSampling{0.8, 7}}) {
    const std::vector<int> made = trainer.generate(prompt, shape.seq_len + 4, sampling);
    std::vector<int> context = prompt;
    for (std::size_t i = 0; i < made.size(); ++i) {
      const std::size_t start = context.size() > shape.seq_len ? context.size() - shape.seq_len : 0;
      std::vector<int> window(context.begin() + static_cast<std::ptrdiff_t>(start), context.end());
      const std::size_t position = window.size() - 1;
      window.resize(shape.seq_len, 0);
      const int want = reference.next_token(window, position, sampling, i);
      ASSERT_EQ(made[i], want) << c.name << " temperature " << sampling.temperature << " token "
                               << i;
      context.push_back(want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Heads, LanguageModelMatchesReference,
    ::testing::Values(
        Case{"untied", false, 1, false, ""}, Case{"tied", true, 1, false, ""},
        Case{"untied_two_micro_batches_zero", false, 2, true, ""},
        Case{"tied_two_micro_batches", true, 2, false, ""},
        Case{"untied_head_x_stationary_summa", false, 1, false, "lm_head X summa S=2"},
        // Adafactor's factors of the vocabulary-parallel embedding and head.
        Case{"untied_two_micro_batches_zero_adafactor", false, 2, true, "", "adafactor"},
        Case{"tied_adafactor", true, 1, false, "", "adafactor"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace meshslice::testing
