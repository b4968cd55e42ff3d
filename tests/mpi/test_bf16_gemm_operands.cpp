// train.precision bf16: a float run whose model GEMMs round their operands to bf16 and sum in
// float (exec/local_gemm_bf16.hpp) against the serial reference in double that rounds the same
// operands, attention's input and FF1's output (reference_kernels.hpp's rounded_to_bf16): they agree far closer
// than to the reference that does not round, so the rounding is where the reference puts it. The
// synthetic task (the teacher's forward pass, the data, stays float) and a language model with a
// tied and an untied head (the head's GEMM rounds too), on every mesh family, with dp (and
// ZeRO-1 there: the optimizer's shards) and pipeline stages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "exec/real_executor.hpp"
#include "lm_reference.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"

namespace meshslice::testing {
namespace {

constexpr int kSteps = 8;
// Step 1 (the same weights on both sides): below a tenth of what bf16's rounding moves (the
// exact reference is 1e-4 away). Not float's accuracy: FF1's output is a GEMM's, rounded to bf16
// on both sides, and where the float run's sum and the double reference's straddle a rounding
// boundary (their sums differ by about 1e-6, so about 1e-6 / 2^-8 of the elements) the two keep
// values a bf16 step apart: 3e-6 on the 1x2 language model. A reference that did not round it
// would be 2.4e-5 away there. Later steps: Adam's first updates are about lr times
// the gradient's sign, so an operand rounded the other way at a tie (the float run's value and
// the double reference's differ in the last float bits) moves a weight whose gradient is near 0
// by lr, and the runs part at bf16's accuracy, not float's; they are held to that.
constexpr double kFirstStep = 1e-5;
constexpr double kBf16 = 2e-3;  // 2^-9, bf16's relative rounding

double relative(double got, double want) { return std::abs(got - want) / std::abs(want); }

// ZeRO-1 wherever there are replicas to shard the optimizer over.
StepSettings step_settings() {
  StepSettings s;
  s.zero = torus().size(Axis::dp) > 1;
  return s;
}

// An executor whose model GEMMs round their operands to bf16 where `bf16` (train.precision bf16).
RealExecutor<float>& rounding_if(bool bf16, RealExecutor<float>& ex) {
  if (bf16) ex.round_gemm_operands_to_bf16(fastest_bf16_route());
  return ex;
}

// A trainer of the synthetic task on executors of its own, in bf16 or float.
struct SyntheticRun {
  SyntheticRun(const ModelShape& shape, const ModelPlan& plan, const OptimizerSettings& opt,
               bool bf16)
      : trainer(rounding_if(bf16, ex), shape, plan, opt, {11, 12, 13}, step_settings(), &data_ex) {}
  RealExecutor<float> ex{torus(), CommOptions{}}, data_ex{torus(), CommOptions{}};
  Trainer<RealExecutor<float>> trainer;  // made after the executors it trains on
};

// The weights that keep a bf16 copy (Parameter::rounded), by name, and how many of their copies'
// elements are not their fp32 value rounded (where this rank keeps it: the shard, or a sharded
// master's row).
struct Copies {
  std::vector<std::string> names;
  std::size_t stale = 0;
};
Copies bf16_copies(const ParameterSet<float>& parameters) {
  Copies out;
  for (const Parameter<float>& p : parameters) {
    if (!p.rounded.data()) continue;
    out.names.push_back(p.name);
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.values());
    const auto rounded = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.rounded);
    for (std::size_t i = 0; i < elements(values); ++i)
      out.stale += to_bfloat16(values.data()[i]).bits != rounded.data()[p.values_first() + i].bits;
  }
  return out;
}

// One step's loss and gradient norm from the distributed run and the two references.
struct Losses {
  double got, got_norm, rounded, rounded_norm, exact;
};

void expect_close(const Losses& l, int step) {
  if (step == 1) {
    EXPECT_LE(relative(l.got, l.rounded), kFirstStep) << "step 1";
    EXPECT_LE(relative(l.got_norm, l.rounded_norm), 10 * kFirstStep) << "step 1's gradient norm";
    EXPECT_GE(relative(l.got, l.exact), 10 * relative(l.got, l.rounded))
        << "bf16 rounding made no difference";
  }
  EXPECT_LE(relative(l.got, l.rounded), kBf16) << "step " << step;
}

// GPT's block (GeLU) and Llama's (SwiGLU, whose gate and up FF1's output holds, kept in bf16
// alike; grouped-query attention).
TEST(Bf16GemmOperands, SyntheticTaskMatchesTheReferenceThatRoundsAlike) {
  ModelShape llama = test_block_shape(4);
  llama.mlp = MlpKind::swiglu;
  llama.ffn_hidden = 72;
  llama.kv_heads = 2;
  for (const ModelShape& shape : {test_block_shape(4), llama}) {
    SCOPED_TRACE(shape.mlp == MlpKind::swiglu ? "swiglu, grouped-query" : "gelu");
    const OptimizerSettings opt = test_adamw(2, kSteps);
    const TaskSeeds seeds{11, 12, 13};  // SyntheticRun's
    SyntheticRun run(shape, default_model_plan(shape, {Algorithm::meshslice, {2, 1}}), opt, true);
    ReferenceTrainer<double> rounded(shape, seeds, opt), exact(shape, seeds, opt);
    rounded.round_gemm_operands_to_bf16();
    const std::size_t tokens = shape.tokens() * static_cast<std::size_t>(torus().size(Axis::dp));
    for (int step = 1; step <= kSteps; ++step) {
      const auto got = run.trainer.step();
      Losses l{got.loss, got.grad_norm, rounded.train_step(tokens), 0, exact.train_step(tokens)};
      l.rounded_norm = rounded.last_gradient_norm();
      expect_close(l, step);
    }
  }
}

TEST(Bf16GemmOperands, LanguageModelHeadsMatchTheReferenceThatRoundsAlike) {
  for (const bool tied : {false, true}) {
    SCOPED_TRACE(tied ? "tied head" : "untied head");
    if (tied && torus().size(Axis::pp) > 1) continue;  // needs the first and last block together
    const ModelShape shape = test_lm_shape(8, tied);
    const OptimizerSettings opt = test_adamw(2, kSteps);
    const TaskSeeds seeds{11, 12, 13};
    const TokenDataset dataset;
    const data::TokenSamples samples = dataset.samples(shape.seq_len);
    RealExecutor<float> ex(torus(), CommOptions{});
    ex.round_gemm_operands_to_bf16(fastest_bf16_route());
    const ModelPlan plan = default_model_plan(shape, {Algorithm::meshslice, {2, 1}});
    Trainer<RealExecutor<float>> trainer(ex, shape, plan, opt, seeds, step_settings(), nullptr,
                                         &samples);
    ReferenceLm<double> rounded(shape, seeds.student), exact(shape, seeds.student);
    rounded.blocks().round_gemm_operands_to_bf16();
    const std::size_t sequences =
        shape.sequences * static_cast<std::size_t>(torus().size(Axis::dp));
    std::vector<int> ids, targets;
    for (int step = 1; step <= kSteps; ++step) {
      const auto got = trainer.step();
      global_batch(samples, data::Split::train, static_cast<std::size_t>(step - 1), sequences,
                   shape.seq_len, ids, targets);
      Losses l{got.loss, got.grad_norm, rounded.loss_and_gradients(ids, targets), 0,
               exact.loss_and_gradients(ids, targets)};
      l.rounded_norm = rounded.step(opt, static_cast<std::size_t>(step));
      exact.step(opt, static_cast<std::size_t>(step));
      expect_close(l, step);
    }
    // The head's weight (the embedding's table when tied) keeps a bf16 copy as the blocks'
    // weights do, on the stage that holds the head, fresh after every step.
    const Copies copies = bf16_copies(trainer.student().parameters());
    const std::string head = tied ? "embedding.weight" : "lm_head.weight";
    const bool holds_head = torus().coord(Axis::pp) == torus().size(Axis::pp) - 1;
    EXPECT_EQ(std::count(copies.names.begin(), copies.names.end(), head), holds_head ? 1 : 0);
    EXPECT_EQ(copies.stale, 0u);
  }
}

// The saved inputs of QKV, FF1 and FF2, read only by their layer's forward and weight GEMMs,
// are kept in bf16 where those plans take operands kept in bf16 (MeshSlice; SUMMA on one chip)
// and the kernel that writes them (the norm, the activation) writes them in their layout;
// attention's input (QKV's output) and FF1's output are kept in bf16 in every bf16 run (rounded
// by the kernels that read them first: repeat_kv, the activation): half their bytes, counted in
// the estimate. The tests above run the default MeshSlice plan, so they train with
// them kept so.
TEST(Bf16GemmOperands, FcTensorsKeptInBf16HalveTheirBytes) {
  if (torus().size(Axis::pp) > 1) GTEST_SKIP() << "one activation set per block without stages";
  const ModelShape shape = test_block_shape(4);
  const OptimizerSettings opt = test_adamw(2, kSteps);
  const std::size_t pr = torus().size(Axis::row), pc = torus().size(Axis::col);
  const std::size_t rows = shape.tokens() / pr;  // a standard-layout shard's
  for (const Algorithm algorithm : {Algorithm::meshslice, Algorithm::summa}) {
    const ModelPlan plan = default_model_plan(shape, {algorithm, {2, 1}});
    const FcKind qkv = block_fc(AttentionFc::qkv), ff1 = block_fc(MlpFc::ff1),
                 ff2 = block_fc(MlpFc::ff2);
    ASSERT_EQ(plan[qkv].input(), Layout::standard);  // else the norm could not write it
    ASSERT_EQ(plan[ff1].input(), Layout::standard);
    ASSERT_EQ(plan[ff1].output(), plan[ff2].input());
    std::size_t activations[2] = {};  // float, bf16
    for (const bool bf16 : {false, true}) {
      activations[bf16] = SyntheticRun(shape, plan, opt, bf16).trainer.memory().activations;
    }
    const bool kept = algorithm == Algorithm::meshslice || pr * pc == 1;
    const std::size_t inputs = rows * (2 * shape.hidden + shape.ffn()) / pc;  // QKV, FF1, FF2
    const std::size_t outputs = rows * (3 * shape.hidden + shape.dims().ff1_outputs()) / pc;
    EXPECT_EQ(activations[0] - activations[1],
              shape.blocks * ((kept ? inputs : 0) + outputs) * sizeof(float) / 2)
        << algorithm_name(algorithm);
  }
}

// A bf16 run keeps each block weight in bf16 as well (Parameter::rounded), which its forward and
// backward-data GEMMs read in place of rounding the fp32 master weight (the value the optimizer
// updates) at every use, where their plans take operands kept in bf16 (MeshSlice; SUMMA on one
// chip): 2 bytes more per weight, counted with the parameters. With ZeRO-1 over dp replicas such
// a weight, read only through its copy, keeps its master for its replica's row alone (Megatron's
// distributed optimizer): 4 (dp - 1) / dp bytes less. After each step every copy is its weight's
// value rounded, bit for bit, where this rank keeps the value (on copies not refreshed after the
// update, the comparisons above part from the reference by 17 % of the loss at step 2; the
// others' rows come by the all-gather, which the comparisons above need).
TEST(Bf16GemmOperands, WeightsKeepABf16CopyOfTheirValue) {
  if (torus().size(Axis::pp) > 1) GTEST_SKIP() << "every block on this rank without stages";
  const ModelShape shape = test_block_shape(4);
  const OptimizerSettings opt = test_adamw(2, kSteps);
  const std::size_t chips = torus().size(Axis::row) * torus().size(Axis::col);
  const std::size_t dp = torus().size(Axis::dp);
  for (const Algorithm algorithm : {Algorithm::meshslice, Algorithm::summa}) {
    SCOPED_TRACE(algorithm_name(algorithm));
    const ModelPlan plan = default_model_plan(shape, {algorithm, {2, 1}});
    std::size_t parameters[2] = {};  // float, bf16
    for (const bool bf16 : {false, true}) {
      SyntheticRun run(shape, plan, opt, bf16);
      Trainer<RealExecutor<float>>& trainer = run.trainer;
      parameters[bf16] = trainer.memory().parameters;
      if (!bf16) continue;
      for (int step = 0; step < 2; ++step) trainer.step();
      const Copies copies = bf16_copies(trainer.student().parameters());
      const bool kept = algorithm == Algorithm::meshslice || chips == 1;
      // QKV, attention's output, FF1, FF2
      EXPECT_EQ(copies.names.size(), kept ? shape.blocks * 4 : 0);
      EXPECT_EQ(sharded_masters(trainer.student().parameters()), dp > 1 ? copies.names.size() : 0);
      EXPECT_EQ(copies.stale, 0u);
    }
    const bool kept = algorithm == Algorithm::meshslice || chips == 1;
    const auto weights = static_cast<double>(block_fc_weights(shape.dims())) * shape.blocks / chips;
    const double masters_left = dp > 1 ? weights * sizeof(float) * (dp - 1) / dp : 0;
    EXPECT_EQ(static_cast<double>(parameters[1]) - static_cast<double>(parameters[0]),
              kept ? weights * sizeof(bfloat16) - masters_left : 0);
  }
}

// A bf16 run rounds the GEMM operands that arrive in float (attention's output, the head's
// input, an operand the plan does not take in bf16) into scratch of the executor's, and the bf16
// GEMM keeps buffers of its own: both are sized as the plans are made, so no step or evaluation
// grows or remakes them (which would allocate, and wait for the device, inside a step). On the
// default MeshSlice plan, on one whose layers are W- and X-stationary and transposed, and with
// SUMMA (whose buffers are float: every operand is rounded), for the synthetic task and a
// language model (the head's layer on the last pipeline stage); on a mesh of one chip every
// algorithm is its local GEMM, which takes the callers' operands as they are.
TEST(Bf16GemmOperands, RoundingScratchIsMadeWithThePlans) {
  const OptimizerSettings opt = test_adamw(2, kSteps);
  for (const Algorithm algorithm : {Algorithm::meshslice, Algorithm::summa}) {
    for (const bool transposed : {false, true}) {
      SCOPED_TRACE(concat(algorithm_name(algorithm), transposed ? ", transposed layers" : ""));
      const ModelShape synthetic = test_block_shape(4), lm = test_lm_shape(8, false);
      ModelPlan plan = default_model_plan(lm, {algorithm, {2, 1}});
      if (transposed) plan = with_transposed_layers(plan);
      ModelPlan block_plan = plan;
      block_plan.lm_head.reset();
      SyntheticRun run(synthetic, block_plan, opt, true);
      const std::size_t made = run.ex.bf16_scratch_made();
      EXPECT_GT(made, 0u) << "no scratch made with the plans";
      for (int step = 0; step < 2; ++step) run.trainer.step();
      run.trainer.eval_loss(1);
      EXPECT_EQ(run.ex.bf16_scratch_made(), made) << "the synthetic task's steps grew it";

      const TokenDataset dataset;
      const data::TokenSamples samples = dataset.samples(lm.seq_len);
      RealExecutor<float> ex(torus(), CommOptions{});
      Trainer<RealExecutor<float>> trainer(rounding_if(true, ex), lm, plan, opt, {11, 12, 13},
                                           step_settings(), nullptr, &samples);
      const std::size_t lm_made = ex.bf16_scratch_made();
      for (int step = 0; step < 2; ++step) trainer.step();
      trainer.eval_loss(1);
      EXPECT_EQ(ex.bf16_scratch_made(), lm_made) << "the language model's steps grew it";
    }
  }
}

// The up-front memory check's lower bound (model_config.hpp) stays below what it counts: the
// student's weights (in bf16 with their bf16 copies, which the bound leaves out: they exist only
// where the plans take operands kept in bf16), gradients and optimizer state, the teacher's
// weights (the student's float ones) and the saved activations, in float and bf16 (where the
// plans keep the FC layers' inputs in bf16) and with either attention kernel (the fused kernels
// keep no probabilities: a bound that counted them would refuse runs that fit, here by 1.7x), and
// close to it (within 0.75: the copies are 5 % of what a bf16 run keeps here).
TEST(Bf16GemmOperands, MemoryLowerBoundStaysBelowWhatTheModelKeeps) {
  if (torus().size(Axis::pp) > 1) GTEST_SKIP() << "the bound of a stage is the trainer's";
  ModelShape shape = test_block_shape(2);
  shape.seq_len = 96;  // attention's probabilities about the size of the other activations
  const OptimizerSettings opt = test_adamw(2, kSteps);
  const std::size_t chips = torus().size(Axis::row) * torus().size(Axis::col);
  for (const AttentionKernel kernel : {AttentionKernel::fused, AttentionKernel::blas_blocks}) {
    ModelPlan plan = default_model_plan(shape, {Algorithm::meshslice, {2, 1}});
    plan.attention = kernel;
    for (const bool bf16 : {false, true}) {
      SCOPED_TRACE(concat(attention_kernel_name(kernel), bf16 ? ", bf16" : ", float"));
      SyntheticRun run(shape, plan, opt, bf16);
      Trainer<RealExecutor<float>>& trainer = run.trainer;
      const MemoryUse& m = trainer.memory();
      std::size_t copies = 0;  // the bf16 copies' bytes, which the teacher's weights do not have
      for (const Parameter<float>& p : trainer.student().parameters())
        copies += elements(p.rounded) * sizeof(bfloat16);
      const double kept = static_cast<double>(2 * m.parameters - copies + m.gradients +
                                              m.optimizer_state + m.activations);
      const double bound =
          minimum_memory_bytes(shape, chips, opt.kind, sizeof(float), kernel, bf16);
      EXPECT_LE(bound, kept);
      EXPECT_GE(bound, 0.75 * kept);
    }
  }
}

}  // namespace
}  // namespace meshslice::testing
