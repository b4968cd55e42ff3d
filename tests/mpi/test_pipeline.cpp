// Pipeline parallelism, micro-batches and activation checkpointing against the serial reference
// (model/reference_model.hpp) on the same global data, in double: 10 training steps of losses and
// gradient norms, the evaluation loss and every final weight agree to 1e-9 relative for GPipe,
// 1F1B and interleaved 1F1B (v = 2) at several micro-batch counts, uneven stage splits and
// checkpointed blocks, on every mesh the suite runs (pp x dp x 2D tensor parallelism, and pp = 1
// where the micro-batches alone accumulate gradients). Checkpointing on or off is bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"
#include "exec/real_executor.hpp"
#include "model/block_layers.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"

namespace meshslice::testing {
namespace {

// 8 sequences of 12 tokens cut into up to 8 micro-batches (over up to 2 mesh rows: up to 4);
// H = 24 with 6 heads over up to 2 columns; 8 blocks for 4 stages x 2 chunks.
ModelShape shape(std::size_t blocks) {
  ModelShape s;
  s.hidden = 24;
  s.heads = 6;
  s.blocks = blocks;
  s.seq_len = 12;
  s.sequences = 8;
  return s;
}

OptimizerSettings adamw() {
  OptimizerSettings o;
  o.kind = parse_optimizer("adamw");
  o.lr = 1e-2;
  o.min_lr = 1e-3;
  o.warmup_steps = 2;
  o.total_steps = 10;
  o.set("weight_decay", 0.01);
  o.clip_norm = 0.5;  // active in some steps: the global norm over every stage is checked
  return o;
}

struct Case {
  std::string name;
  PipelineSchedule schedule;
  std::size_t micro_batches;
  std::size_t virtual_stages = 1;
  std::size_t blocks = 4;
  std::set<std::size_t> checkpointed = {};
  Algorithm algorithm = Algorithm::meshslice;
  bool zero = false;
  bool relayouts = false;  // a plan with every row of Table 1 (activations re-laid out)
};

FcPlan fc(Stationary s, bool transposed, Algorithm algorithm) {
  FcPlan p;
  p.stationary = s;
  p.transposed = transposed;
  const GemmChoice c{algorithm, {2, 1}};
  p.gemms = {c, c, c};
  return p;
}

ModelPlan plan_of(const Case& c, const ModelShape& s) {
  if (!c.relayouts) return default_model_plan(s, GemmChoice{c.algorithm, {2, 1}});
  // FF1 W-stationary: its input transposed, its norm staged in the forward pass's buffer.
  return {{fc(Stationary::X, false, c.algorithm), fc(Stationary::W, true, c.algorithm),
           fc(Stationary::W, false, c.algorithm), fc(Stationary::Y, false, c.algorithm)},
          std::nullopt};
}

std::vector<Case> cases() {
  using S = PipelineSchedule;
  return {
      {"gpipe_m4", S::gpipe, 4},
      {"1f1b_m4", S::one_f_one_b, 4},
      {"1f1b_m1_fewer_than_stages", S::one_f_one_b, 1, 1, 4, {}, Algorithm::collective},
      {"gpipe_m8", S::gpipe, 8, 1, 4, {}, Algorithm::collective},
      {"1f1b_m8", S::one_f_one_b, 8},
      {"interleaved_v2_m4", S::interleaved, 4, 2, 8},
      {"interleaved_v2_m8", S::interleaved, 8, 2, 8, {}, Algorithm::collective},
      {"1f1b_m2_uneven_split", S::one_f_one_b, 2, 1, 5},
      {"1f1b_m4_checkpointed", S::one_f_one_b, 4, 1, 4, {0, 2, 3}},
      {"interleaved_v2_m4_checkpointed", S::interleaved, 4, 2, 8, {1, 4, 5}},
      {"1f1b_m2_zero", S::one_f_one_b, 2, 1, 4, {}, Algorithm::meshslice, true},
      {"interleaved_v2_m4_zero_checkpointed",
       S::interleaved,
       4,
       2,
       8,
       {0, 7},
       Algorithm::collective,
       true},
      {"gpipe_m2_checkpointed_relayouts",
       S::gpipe,
       2,
       1,
       4,
       {0, 1, 2, 3},
       Algorithm::meshslice,
       false,
       true},
  };
}

StepSettings step_of(const Case& c) {
  StepSettings step;
  step.schedule = c.schedule;
  step.micro_batches = c.micro_batches;
  step.virtual_stages = c.virtual_stages;
  step.checkpointed = c.checkpointed;
  step.zero = c.zero;
  return step;
}

// Whether this mesh can run the case (the settings' own check): otherwise the case is skipped.
bool runs_here(const Case& c) {
  try {
    check_step_settings(step_of(c), shape(c.blocks), torus().shape());
    return true;
  } catch (const UserError&) {
    return false;
  }
}

class PipelineMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(PipelineMatchesReference, TenStepsLossesAndFinalWeights) {
  const Case& c = GetParam();
  if (!runs_here(c)) GTEST_SKIP() << c.name << " does not fit mesh " << torus().shape().str();
  const ModelShape s = shape(c.blocks);
  const TaskSeeds seeds{21, 22, 23};
  RealExecutor<double> ex(torus(), CommOptions{});
  const ModelPlan plan = plan_of(c, s);
  Trainer<RealExecutor<double>> trainer(ex, s, plan, adamw(), seeds, step_of(c));
  ReferenceTrainer<double> reference(s, seeds, adamw());
  expect_matches_reference(trainer, reference, s, torus().size(Axis::dp), 10, c.name);
}

INSTANTIATE_TEST_SUITE_P(Schedules, PipelineMatchesReference, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// Each stage keeps as many micro-batches' activations as its schedule holds at once: GPipe all
// m, 1F1B at most p - s (stage s of p); the student's activation memory follows.
TEST(PipelineMemory, ActivationSlotsFollowTheSchedule) {
  const ModelShape s = shape(4);
  const std::size_t p = torus().size(Axis::pp), stage = torus().coord(Axis::pp), m = 4;
  const ModelPlan plan = default_model_plan(s, GemmChoice{Algorithm::collective, {1, 1}});
  RealExecutor<double> ex(torus(), CommOptions{});
  StepSettings gpipe, one_f_one_b;
  gpipe.schedule = PipelineSchedule::gpipe;
  gpipe.micro_batches = one_f_one_b.micro_batches = m;
  if (s.sequences / m % torus().size(Axis::row) != 0) GTEST_SKIP() << "micro-batch too small";
  Trainer<RealExecutor<double>> a(ex, s, plan, adamw(), TaskSeeds{}, gpipe);
  Trainer<RealExecutor<double>> b(ex, s, plan, adamw(), TaskSeeds{}, one_f_one_b);
  EXPECT_EQ(a.student().chunks().at(0).slots, m);
  EXPECT_EQ(b.student().chunks().at(0).slots, std::min(m, p - stage));
  EXPECT_LE(b.memory().activations, a.memory().activations);
  if (p - stage < m) {
    EXPECT_LT(b.memory().activations, a.memory().activations);
  }
}

// Recomputing a block's activations in the backward pass gives the same numbers bit for bit:
// the same kernels on the same inputs. And it keeps only each block's input.
TEST(PipelineCheckpointing, BitIdenticalLossesAndLessMemory) {
  const ModelShape s = shape(4);
  const ModelPlan plan = default_model_plan(s, GemmChoice{Algorithm::meshslice, {2, 1}});
  StepSettings kept, recomputed;
  kept.micro_batches = recomputed.micro_batches = 2;
  recomputed.checkpointed = {0, 1, 2, 3};
  RealExecutor<double> ex(torus(), CommOptions{});
  Trainer<RealExecutor<double>> a(ex, s, plan, adamw(), TaskSeeds{}, kept);
  Trainer<RealExecutor<double>> b(ex, s, plan, adamw(), TaskSeeds{}, recomputed);
  expect_identical_steps(a, b, 3);
  for (std::size_t blk = 0; blk < s.blocks; ++blk)
    EXPECT_EQ(a.student().gather(blk, block_param(MlpParam::ff1)),
              b.student().gather(blk, block_param(MlpParam::ff1)));
  // Kept: a full set per block and slot. Recomputed: each block's input per slot, and one set
  // without input for the recomputation, which keeps FF1's input (and then QKV's) in the
  // forward pass's staging buffers where they are in the standard layout.
  const ModelChunk& chunk = a.student().chunks().at(0);
  const std::size_t sets = chunk.blocks * chunk.slots;
  const std::size_t set = a.memory().activations / sets;
  const std::size_t input =
      a.student().local_tokens() * a.student().local_hidden() * sizeof(double);
  const bool ff1_staged = plan[block_fc(MlpFc::ff1)].input() == Layout::standard;
  const bool qkv_staged =
      ff1_staged && plan[block_fc(AttentionFc::qkv)].input() == Layout::standard;
  const std::size_t staged = (ff1_staged + qkv_staged) * input;
  EXPECT_EQ(b.memory().activations, sets * input + set - input - staged);
}

// ZeRO-1 reduce-scatters each gradient over dp, updates this replica's shard and all-gathers the
// parameters: the same arithmetic on every element as the all-reduce path, and the gradient norm
// summed in the same order, so the losses are bit-identical (dp = 2: each sum has one addition).
// The optimizer state per rank shrinks to 1/dp.
TEST(PipelineZero, BitIdenticalLossesAndShardedOptimizerState) {
  const std::size_t dp = torus().size(Axis::dp);
  if (dp != 2) GTEST_SKIP() << "bit-identity holds where each sum over replicas is one addition";
  const ModelShape s = shape(4);
  const ModelPlan plan = default_model_plan(s, GemmChoice{Algorithm::meshslice, {2, 1}});
  StepSettings plain, zero;
  plain.micro_batches = zero.micro_batches = 2;
  zero.zero = true;
  RealExecutor<double> ex(torus(), CommOptions{});
  Trainer<RealExecutor<double>> a(ex, s, plan, adamw(), TaskSeeds{}, plain);
  Trainer<RealExecutor<double>> b(ex, s, plan, adamw(), TaskSeeds{}, zero);
  expect_identical_steps(a, b, 4);
  for (std::size_t blk = 0; blk < s.blocks; ++blk)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(a.student().gather(blk, kind), b.student().gather(blk, kind))
          << "block " << blk << " " << param_kind_name(kind);
  EXPECT_EQ(b.student().memory().optimizer_state, a.student().memory().optimizer_state / dp);
}

TEST(PipelineErrors, SettingsTheStepCannotRunAreClearErrors) {
  const auto expect_error = [](StepSettings step, ModelShape s, const std::string& words) {
    try {
      check_step_settings(step, s, torus().shape());
      ADD_FAILURE() << "accepted: " << words;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  StepSettings step;
  step.micro_batches = 3;
  expect_error(step, shape(4), "does not divide into pipeline.microbatches = 3");
  step = {};
  step.virtual_stages = 2;
  expect_error(step, shape(8), "needs pipeline.schedule = interleaved");
  step.schedule = PipelineSchedule::interleaved;
  step.micro_batches = 4;
  if (torus().size(Axis::pp) == 1) expect_error(step, shape(8), "needs pipeline stages");
  if (torus().size(Axis::pp) >= 2) {
    expect_error(step, shape(3), "need " + std::to_string(2 * torus().size(Axis::pp)) + " blocks");
    step.micro_batches = 2 * torus().size(Axis::pp) + 1;
    ModelShape many = shape(8);
    many.sequences = step.micro_batches * torus().size(Axis::row);
    expect_error(step, many, "must be a multiple of");
  }
  step = {};
  step.checkpointed = {4};
  expect_error(step, shape(4), "recompute.blocks names block 4");
}

}  // namespace
}  // namespace meshslice::testing
