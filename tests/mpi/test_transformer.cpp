// The distributed transformer against the serial reference (model/reference_model.hpp) on the
// same global data, in double: 20 training steps of losses, gradient norms and then every final
// weight agree to 1e-9 relative, for plans covering every row of Table 1 and its transposed
// variant (with re-layouts), MeshSlice at several S and the baselines, SGD, AdamW and Lion, GeLU
// and SwiGLU MLPs, on every mesh the suite runs (dp and tensor-parallel shapes).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/trace.hpp"
#include "exec/real_executor.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"

namespace meshslice::testing {
namespace {

OptimizerSettings optimizer(OptimizerKind kind) {
  OptimizerSettings o;
  o.kind = kind;
  // Lion moves every element by lr: a tenth of AdamW's, as its paper advises. Adafactor's step
  // is relative to the weight's RMS: PyTorch's default 1e-2.
  const std::string name = optimizer_name(kind);
  const bool adam_like = name == "adamw" || name == "nadamw" || name == "adafactor";
  o.lr = adam_like ? 1e-2 : (name == "lion" ? 1e-3 : 0.1);
  o.min_lr = o.lr / 10;
  o.warmup_steps = 3;
  o.total_steps = 20;
  o.set("weight_decay", 0.01);
  o.clip_norm = 0.5;  // active in some steps: the global norm is part of the check
  return o;
}

GemmChoice choice(Algorithm a, int slices) { return GemmChoice{a, {slices, 1}}; }

FcPlan fc(Stationary s, bool transposed, GemmChoice c) {
  FcPlan p;
  p.stationary = s;
  p.transposed = transposed;
  p.gemms = {c, c, c};
  return p;
}

struct Case {
  std::string name;
  ModelPlan plan;
  OptimizerKind optimizer;
  ModelShape shape = test_block_shape(4);
};

std::vector<Case> cases() {
  const ModelShape s = test_block_shape(4);
  const auto ms = [](int slices) { return choice(Algorithm::meshslice, slices); };
  std::vector<Case> c;
  c.push_back({"default_meshslice_S1_sgd", default_model_plan(s, ms(1)), parse_optimizer("sgd")});
  c.push_back(
      {"default_meshslice_S2_adamw", default_model_plan(s, ms(2)), parse_optimizer("adamw")});
  c.push_back(
      {"default_meshslice_S4_adamw", default_model_plan(s, ms(4)), parse_optimizer("adamw")});
  c.push_back({"default_meshslice_S2_lion", default_model_plan(s, ms(2)), parse_optimizer("lion")});
  c.push_back({"default_meshslice_S2_adafactor", default_model_plan(s, ms(2)),
               parse_optimizer("adafactor")});
  c.push_back(
      {"default_meshslice_S2_nadamw", default_model_plan(s, ms(2)), parse_optimizer("nadamw")});
  c.push_back({"collective_sgd", default_model_plan(s, choice(Algorithm::collective, 1)),
               parse_optimizer("sgd")});
  c.push_back({"summa_adamw", default_model_plan(s, choice(Algorithm::summa, 2)),
               parse_optimizer("adamw")});
  c.push_back(
      {"wang_adamw", default_model_plan(s, choice(Algorithm::wang, 1)), parse_optimizer("adamw")});
  // Every row of Table 1 and transposed variants, with re-layouts in and out of layers and
  // between FF1 and FF2, and a different algorithm per pass.
  ModelPlan mixed{{fc(Stationary::X, false, ms(2)), fc(Stationary::W, false, ms(1)),
                   fc(Stationary::W, true, choice(Algorithm::summa, 2)),
                   fc(Stationary::Y, false, choice(Algorithm::collective, 1))},
                  std::nullopt};
  mixed[0].gemms[1] = choice(Algorithm::wang, 1);
  c.push_back({"mixed_relayouts_adamw", mixed, parse_optimizer("adamw")});
  c.push_back({"mixed_relayouts_lion", mixed, parse_optimizer("lion")});
  c.push_back({"mixed_relayouts_adafactor", mixed, parse_optimizer("adafactor")});
  c.push_back({"mixed_relayouts_nadamw", mixed, parse_optimizer("nadamw")});
  ModelPlan transposed{{fc(Stationary::W, true, ms(2)), fc(Stationary::Y, true, ms(1)),
                        fc(Stationary::X, true, ms(2)), fc(Stationary::X, false, ms(4))},
                       std::nullopt};
  c.push_back({"transposed_variants_sgd", transposed, parse_optimizer("sgd")});
  // Sequences long enough for several attention tiles: the BLAS-block kernel's three blocks of
  // 32 query rows (kernels/attention.hpp), the fused kernel's two tiles of 64 (fused_attention.hpp),
  // the last ones partial.
  ModelShape long_sequences = s;
  long_sequences.seq_len = 72;
  c.push_back({"causal_blocks_adamw", default_model_plan(long_sequences, ms(2)),
               parse_optimizer("adamw"), long_sequences});
  // RoPE (q and k turned by position), also across causal row blocks.
  ModelShape rope = s;
  rope.rope = true;
  c.push_back({"rope_adamw", default_model_plan(rope, ms(2)), parse_optimizer("adamw"), rope});
  rope.seq_len = 72;
  c.push_back({"rope_causal_blocks_sgd", transposed, parse_optimizer("sgd"), rope});
  // The attention kernel other than this backend's default (fused on a GPU, the BLAS blocks on
  // a CPU: block/block_work.cpp), with and without RoPE: both kernels run on every backend.
  const AttentionKernel other = default_attention_kernel() == AttentionKernel::fused
                                    ? AttentionKernel::blas_blocks
                                    : AttentionKernel::fused;
  ModelPlan other_kernel = default_model_plan(long_sequences, ms(2));
  other_kernel.attention = other;
  c.push_back(
      {"other_attention_kernel_adamw", other_kernel, parse_optimizer("adamw"), long_sequences});
  transposed.attention = other;
  c.push_back({"other_attention_kernel_rope_sgd", transposed, parse_optimizer("sgd"), rope});
  // SwiGLU: FF1's gate and up grouped per chip block of its output, over mesh columns (FF1's
  // output standard) or rows (transposed: the mixed and transposed plans), with re-layouts
  // between FF1 and FF2 in the mixed plan.
  ModelShape swiglu = s;
  swiglu.mlp = MlpKind::swiglu;
  swiglu.ffn_hidden = 72;
  const ModelPlan standard{{fc(Stationary::Y, false, ms(2)), fc(Stationary::Y, false, ms(1)),
                            fc(Stationary::Y, false, ms(2)), fc(Stationary::X, false, ms(2))},
                           std::nullopt};
  c.push_back({"swiglu_standard_adamw", standard, parse_optimizer("adamw"), swiglu});
  c.push_back({"swiglu_default_meshslice_S2_lion", default_model_plan(swiglu, ms(2)),
               parse_optimizer("lion"), swiglu});
  c.push_back({"swiglu_mixed_relayouts_adamw", mixed, parse_optimizer("adamw"), swiglu});
  c.push_back({"swiglu_transposed_variants_sgd", transposed, parse_optimizer("sgd"), swiglu});
  // Adafactor's factors through grouped columns, stored as W and as W^T.
  c.push_back({"swiglu_standard_adafactor", standard, parse_optimizer("adafactor"), swiglu});
  c.push_back(
      {"swiglu_transposed_variants_adafactor", transposed, parse_optimizer("adafactor"), swiglu});
  // GeGLU: the same gated path with GeLU on the gate.
  ModelShape geglu = swiglu;
  geglu.mlp = MlpKind::geglu;
  c.push_back({"geglu_mixed_relayouts_adamw", mixed, parse_optimizer("adamw"), geglu});
  c.push_back({"geglu_transposed_variants_sgd", transposed, parse_optimizer("sgd"), geglu});
  // Squared ReLU: an ungated activation other than GeLU, its output re-laid out (mixed).
  ModelShape relu2 = s;
  relu2.mlp = MlpKind::relu2;
  c.push_back({"relu2_mixed_relayouts_adamw", mixed, parse_optimizer("adamw"), relu2});
  return c;
}

class TransformerMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(TransformerMatchesReference, TwentyStepsLossesAndFinalWeights) {
  const Case& c = GetParam();
  const ModelShape shape = c.shape;
  const OptimizerSettings opt = optimizer(c.optimizer);
  const TaskSeeds seeds{11, 12, 13};
  RealExecutor<double> ex(torus(), CommOptions{});
  Trainer<RealExecutor<double>> trainer(ex, shape, c.plan, opt, seeds);
  ReferenceTrainer<double> reference(shape, seeds, opt);
  expect_matches_reference(trainer, reference, shape, torus().size(Axis::dp), 20, c.name);
  if (HasFatalFailure()) return;
  const bool relayouts =
      std::any_of(c.plan.blocks.begin(), c.plan.blocks.end(), [](const FcPlan& p) {
        return p.input() == Layout::transposed || p.output() == Layout::transposed;
      });
  EXPECT_EQ(trainer.student().relayouts().count > 0, relayouts) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Plans, TransformerMatchesReference, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// Data parallelism: each gradient's dp reduction starts as soon as the gradient exists and is
// progressed by the rest of the backward pass, so in a trace of the step most reductions are
// still in flight while a later layer's GEMMs run. Averaging after the backward pass (or
// waiting for each reduction at once) leaves no computation inside any reduction: this fails.
TEST(TransformerTrace, DataParallelReductionsOverlapTheRestOfTheBackwardPass) {
  if (torus().size(Axis::dp) == 1) GTEST_SKIP() << "no data parallelism on this mesh";
  Trace trace;
  RealExecutor<double> ex(torus(), CommOptions{}, 8, &trace);
  const ModelShape shape = test_block_shape(4);
  const ModelPlan plan = default_model_plan(shape, choice(Algorithm::meshslice, 2));
  Trainer<RealExecutor<double>> trainer(ex, shape, plan, optimizer(parse_optimizer("adamw")),
                                        TaskSeeds{});
  trainer.step();  // the first step's start-up out of the way
  trace.clear();
  trainer.step();
  std::vector<TraceEvent> reductions, compute;
  for (const TraceEvent& e : trace.events()) {
    if (e.lane == TraceLane::dp_links) reductions.push_back(e);
    if (e.lane == TraceLane::compute) compute.push_back(e);
  }
  ASSERT_EQ(reductions.size(), shape.blocks * block_param_count()) << trace.text_timeline();
  std::size_t overlapped = 0;
  for (const TraceEvent& r : reductions)
    overlapped += std::any_of(compute.begin(), compute.end(), [&](const TraceEvent& c) {
      return c.start >= r.start && c.start < r.end && c.name == "gemm";
    });
  // The last gradients (block 0's QKV and first norm) exist only at the end of the backward pass.
  EXPECT_GE(overlapped, reductions.size() / 2) << trace.text_timeline();
}

// ZeRO-1 with shards whose elements do not all divide over dp (H = 18: a mesh column's gain has 9
// elements): the unsharded gradients count once in the global norm, not once per replica, and
// the run matches the reference with clipping active.
TEST(Transformer, ZeroWithUnshardedParametersMatchesTheReference) {
  if (torus().size(Axis::dp) == 1) GTEST_SKIP() << "no data parallelism on this mesh";
  ModelShape shape = test_block_shape(4);
  shape.hidden = 18;
  for (const char* name : {"adamw", "lion", "adafactor", "nadamw"}) {
    SCOPED_TRACE(name);
    const OptimizerSettings opt = optimizer(parse_optimizer(name));
    const TaskSeeds seeds{11, 12, 13};
    StepSettings zero;
    zero.zero = true;
    RealExecutor<double> ex(torus(), CommOptions{});
    const ModelPlan plan = default_model_plan(shape, choice(Algorithm::meshslice, 1));
    Trainer<RealExecutor<double>> trainer(ex, shape, plan, opt, seeds, zero);
    std::size_t sharded = 0;
    for (const Parameter<double>& p : trainer.student().parameters()) sharded += p.sharded();
    ASSERT_GT(sharded, 0u);
    ASSERT_LT(sharded, trainer.student().parameters().size());
    ReferenceTrainer<double> reference(shape, seeds, opt);
    expect_matches_reference(trainer, reference, shape, torus().size(Axis::dp), 20,
                             concat("zero_h18_", name));
  }
}

// Every parameter by its name and global shape, the optimizer's state only what it keeps (SGD
// its momentum, AdamW two moments, Lion one, Adafactor a value per row and column of a matrix,
// whole on each chip, and a gain's moment), and each gradient's dp averaging its own place in the
// backward order: the last block's FF2 first, block 0's first norm gain last.
TEST(Transformer, ParametersAreNamedAndOwnTheirStateAndDpHandle) {
  RealExecutor<double> ex(torus(), CommOptions{});
  const ModelShape s = test_block_shape(4);
  const ModelPlan plan = default_model_plan(s, choice(Algorithm::collective, 1));
  ModelPart sgd_part, adamw_part, lion_part, adafactor_part;
  sgd_part.optimizer = parse_optimizer("sgd");
  lion_part.optimizer = parse_optimizer("lion");
  adafactor_part.optimizer = parse_optimizer("adafactor");
  Transformer<RealExecutor<double>> sgd(ex, s, plan, 1, true, sgd_part);
  Transformer<RealExecutor<double>> adamw(ex, s, plan, 1, true, adamw_part);
  Transformer<RealExecutor<double>> lion(ex, s, plan, 1, true, lion_part);
  Transformer<RealExecutor<double>> adafactor(ex, s, plan, 1, true, adafactor_part);
  ASSERT_EQ(sgd.parameters().size(), s.blocks * block_param_count());
  const std::size_t ff1_at = sgd.parameters().index_of("blocks.1.ff1.weight");
  ASSERT_NE(ff1_at, ParameterSet<double>::npos);
  const Parameter<double>& ff1 = sgd.parameters()[ff1_at];
  EXPECT_EQ(ff1.global.rows, s.hidden);
  EXPECT_EQ(ff1.global.cols, s.ffn());
  EXPECT_EQ(sgd.optimizer().states(ff1_at).size(), 1u);
  EXPECT_EQ(adamw.optimizer().states(ff1_at).size(), 2u);
  EXPECT_EQ(2 * sgd.memory().optimizer_state, adamw.memory().optimizer_state);
  EXPECT_EQ(lion.memory().optimizer_state, sgd.memory().optimizer_state);
  EXPECT_EQ(adamw.optimizer().bytes(), adamw.memory().optimizer_state);
  const std::vector<Matrix<double>>& factors = adafactor.optimizer().states(ff1_at);
  ASSERT_EQ(factors.size(), 2u);
  EXPECT_EQ(elements(factors[0]), s.hidden);
  EXPECT_EQ(elements(factors[1]), s.ffn());
  const std::size_t gain_at = sgd.parameters().index_of("blocks.0.norm2.gain");
  ASSERT_NE(gain_at, ParameterSet<double>::npos);
  ASSERT_EQ(adafactor.optimizer().states(gain_at).size(), 1u);
  EXPECT_EQ(elements(adafactor.optimizer().states(gain_at)[0]),
            elements(sgd.parameters()[gain_at].value));
  EXPECT_LT(adafactor.memory().optimizer_state, sgd.memory().optimizer_state);
  std::vector<std::string> by_handle(sgd.parameters().size());
  for (const Parameter<double>& p : sgd.parameters()) {
    ASSERT_LT(p.sync, by_handle.size());
    EXPECT_TRUE(by_handle[p.sync].empty()) << p.name << " shares a dp handle";
    by_handle[p.sync] = p.name;
  }
  EXPECT_EQ(by_handle.front(), "blocks.1.ff2.weight");
  EXPECT_EQ(by_handle.back(), "blocks.0.norm1.gain");
}

TEST(TransformerErrors, ShapesTheMeshCannotSplitAreClearErrors) {
  RealExecutor<double> ex(torus(), CommOptions{});
  const ModelPlan plan = default_model_plan(test_block_shape(4), choice(Algorithm::collective, 1));
  const auto expect_error = [&](ModelShape s, const std::string& words) {
    try {
      Transformer<RealExecutor<double>>(ex, s, plan, 1, true);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  ModelShape s = test_block_shape(4);
  s.heads = 5;
  expect_error(s, "not divisible by the 5 heads");
  if (torus().size(Axis::col) > 1) {
    s = test_block_shape(4);
    s.heads = 1;
    s.hidden = 24;
    expect_error(s, "mesh columns");
  }
  if (torus().size(Axis::row) > 1) {
    s = test_block_shape(4);
    s.sequences = 1;
    expect_error(s, "mesh rows");
  }
  const int pr = torus().size(Axis::row), pc = torus().size(Axis::col);
  s = test_block_shape(4);
  s.kv_heads = 4;
  expect_error(s, "model.kv_heads = 4 must divide model.heads = 6");
  if (pc > 1) {
    s = test_block_shape(4);
    s.kv_heads = 1;
    expect_error(s, "key and value heads (model.kv_heads) do not divide over the");
  }
  if (pr > 1 || pc > 1) {  // an MLP width neither splits
    s = test_block_shape(4);
    s.mlp = MlpKind::swiglu;
    s.ffn_hidden = 12 * static_cast<std::size_t>(pr * pc) + 1;
    expect_error(s, "model.ffn_hidden");
  }
  // A plan made in code for a block of other layers (every rank throws before any collective).
  ModelPlan short_plan = plan;
  short_plan.blocks.pop_back();
  EXPECT_THROW(Transformer<RealExecutor<double>>(ex, test_block_shape(4), short_plan, 1, true),
               InternalError);
}

// Grouped-query attention: 6 query heads sharing each key and value head in groups of 2 or 3
// (the key and value heads must split over the mesh columns), with RoPE, on the default plan,
// the plan with re-layouts and transposed variants, the other attention kernel, and with
// SwiGLU: Llama's block.
TEST(Transformer, GroupedQueryAttentionMatchesTheReference) {
  const std::size_t pc = static_cast<std::size_t>(torus().size(Axis::col));
  ModelShape s = test_block_shape(4);
  s.rope = true;
  s.kv_heads = pc == 2 ? 2 : 3;
  ASSERT_EQ(s.kv_heads % pc, 0u);
  const GemmChoice ms2 = choice(Algorithm::meshslice, 2);
  ModelPlan mixed{{fc(Stationary::X, false, ms2), fc(Stationary::W, false, ms2),
                   fc(Stationary::W, true, choice(Algorithm::summa, 2)),
                   fc(Stationary::Y, false, choice(Algorithm::collective, 1))},
                  std::nullopt};
  ModelPlan transposed{{fc(Stationary::W, true, ms2), fc(Stationary::Y, true, ms2),
                        fc(Stationary::X, true, ms2), fc(Stationary::X, false, ms2)},
                       std::nullopt};
  ModelPlan other_kernel = default_model_plan(s, ms2);
  other_kernel.attention = default_attention_kernel() == AttentionKernel::fused
                               ? AttentionKernel::blas_blocks
                               : AttentionKernel::fused;
  ModelShape llama = s;
  llama.mlp = MlpKind::swiglu;
  llama.ffn_hidden = 72;
  const std::pair<std::string, std::pair<ModelShape, ModelPlan>> runs[] = {
      {"default", {s, default_model_plan(s, ms2)}},
      {"mixed_relayouts", {s, mixed}},
      {"transposed_variants", {s, transposed}},
      {"other_attention_kernel", {s, other_kernel}},
      {"llama_block", {llama, default_model_plan(llama, ms2)}}};
  const OptimizerSettings opt = optimizer(parse_optimizer("adamw"));
  const TaskSeeds seeds{11, 12, 13};
  for (const auto& [name, run] : runs) {
    RealExecutor<double> ex(torus(), CommOptions{});
    Trainer<RealExecutor<double>> trainer(ex, run.first, run.second, opt, seeds);
    ReferenceTrainer<double> reference(run.first, seeds, opt);
    expect_matches_reference(trainer, reference, run.first, torus().size(Axis::dp), 20,
                             "grouped_query_" + name);
  }
  RealExecutor<double> ex(torus(), CommOptions{});
  const Transformer<RealExecutor<double>> model(ex, s, default_model_plan(s, ms2), 1, true);
  const Parameter<double>* qkv = model.parameters().find("blocks.0.qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->global.cols, s.hidden + 2 * s.kv_heads * s.head_dim());  // [q | k | v]
}

// SwiGLU's FF1 is one H x 2F weight whose logical columns are [gate | up] (as the reference and
// checkpoints have them), and its default width is Llama's 8H/3 rounded up to 256.
TEST(Transformer, SwigluFf1HoldsGateAndUp) {
  RealExecutor<double> ex(torus(), CommOptions{});
  ModelShape s = test_block_shape(4);
  s.mlp = MlpKind::swiglu;
  EXPECT_EQ(s.ffn(), 256u);
  s.ffn_hidden = 72;
  const Transformer<RealExecutor<double>> model(
      ex, s, default_model_plan(s, choice(Algorithm::collective, 1)), 1, true);
  const Parameter<double>* ff1 = model.parameters().find("blocks.0.ff1.weight");
  const Parameter<double>* ff2 = model.parameters().find("blocks.0.ff2.weight");
  ASSERT_NE(ff1, nullptr);
  ASSERT_NE(ff2, nullptr);
  EXPECT_EQ(ff1->global.rows, s.hidden);
  EXPECT_EQ(ff1->global.cols, 2 * s.ffn());
  EXPECT_EQ(ff2->global.rows, s.ffn());
  EXPECT_EQ(default_ffn(4096, MlpKind::swiglu), 11008u);  // Llama 2 7B's
  EXPECT_EQ(default_ffn(4096, MlpKind::gelu), 16384u);
}

}  // namespace
}  // namespace meshslice::testing
