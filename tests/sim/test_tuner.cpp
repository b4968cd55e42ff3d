// The MeshSlice autotuner (src/tune): phase 1's dataflows, transpositions and shardings, phase 2's
// mesh and per-GEMM S, the tuner checked against the emulator (no data) for GPT-3 and
// Megatron-NLG at 64, 128 and 256 chips of the TPUv4 description, weak scaling (batch = chips / 2
// sequences of 2048 tokens), as inputs/tune/*-256.yaml; and the joint planner's step and memory
// model and search.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "block/block_fc_layers.hpp"
#include "core/errors.hpp"
#include "gemm/fc_dataflow.hpp"
#include "sim/machine_loader.hpp"
#include "test_support.hpp"
#include "tune/block_tuner.hpp"
#include "tune/emulator_check.hpp"
#include "tune/joint_planner.hpp"
#include "tune/link_fit.hpp"

namespace meshslice::tune {
namespace {

const hw::MachineModel& tpuv4() {
  static const hw::MachineModel model(hw::load_machine(hw::machine_path("tpuv4-sim")));
  return model;
}

std::size_t weak_tokens(int chips) { return static_cast<std::size_t>(chips / 2) * 2048; }

TEST(Phase1, TheTransposedVariantFollowsThePredecessorsLayout) {
  // T = 100 tokens < every layer size: W is the largest of all four layers.
  const std::size_t T = 100;
  const std::vector<FcShape> chain = {
      {200, 600, false}, {200, 200, true}, {200, 800, false}, {800, 200, true}};
  const auto flows = choose_dataflows(T, chain);
  ASSERT_EQ(flows.size(), 4u);
  for (const FcDataflow& f : flows) EXPECT_EQ(f.stationary, Stationary::W);
  // A W-stn layer takes its input transposed: run transposed on a standard input, untransposed
  // on its predecessor's transposed output.
  EXPECT_TRUE(flows[0].transposed);
  EXPECT_FALSE(flows[1].transposed);
  EXPECT_TRUE(flows[2].transposed);
  EXPECT_FALSE(flows[3].transposed);
  // meshslice-train's chain: attention needs the standard layout, so attn_out reads standard.
  const auto standard =
      sim::block_gemms(sim::megatron_nlg(), 8 * 2048, sim::AttentionLayout::standard);
  const auto paper =
      sim::block_gemms(sim::megatron_nlg(), 8 * 2048, sim::AttentionLayout::follows_qkv);
  EXPECT_TRUE(standard[3].transposed);  // attn_out: W-stn on a standard input
  EXPECT_FALSE(paper[3].transposed);    // attn_out: W-stn on QKV's transposed output
  EXPECT_EQ(standard[9].transposed, paper[9].transposed);
}

TEST(Phase1, ShardingNamesEveryTensorDimension) {
  EXPECT_EQ(layer_sharding(Stationary::Y, false),
            "X[tokens/row in/col] W[in/row out/col] Y[tokens/row out/col]");
  EXPECT_EQ(layer_sharding(Stationary::X, false),
            "X[tokens/row in/col] W[in/col out/row] Y[tokens/row out/col]");
  EXPECT_EQ(layer_sharding(Stationary::W, false),
            "X[tokens/col in/row] W[in/row out/col] Y[tokens/row out/col]");
  EXPECT_EQ(layer_sharding(Stationary::W, true),
            "X[tokens/row in/col] W[in/col out/row] Y[tokens/col out/row]");
}

TEST(Phase2, EachGemmTakesItsOwnBestSlices) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const sim::SweepOptions options;
  const auto gemms = sim::block_gemms(sim::gpt3(), weak_tokens(256));
  const BlockTuning t = tune_block(model, gemms, 256, options);
  const MeshChoice& best = t.best_mesh();
  ASSERT_EQ(best.gemms.size(), gemms.size());
  bool differ = false;
  for (const TunedGemm& g : best.gemms) {
    // The chosen S is the argmin of this GEMM's own cost over the valid candidates.
    for (int S : options.slices) {
      try {
        check_sliceable(g.gemm.problem, best.rows, best.cols, S,
                        sim::gemm_options(S, options).block);
      } catch (const UserError&) {
        continue;
      }
      EXPECT_LE(g.seconds, model.meshslice_seconds(g.gemm.problem, best.rows, best.cols, S))
          << g.gemm.label() << " S=" << S;
    }
    differ = differ || g.slices != best.gemms.front().slices;
  }
  EXPECT_TRUE(differ) << "one S for every GEMM: the per-GEMM choice was not made";
  // The best mesh is the fastest usable one, and every factorization of 256 with both sides
  // >= min_mesh_side = 2 was tried: 2x128 to 128x2.
  EXPECT_EQ(t.meshes.size(), 7u);
  for (const MeshChoice& m : t.meshes) {
    if (m.usable()) {
      EXPECT_LE(best.seconds, m.seconds);
    }
  }
}

TEST(Phase2, NoUsableMeshSaysWhyForEach) {
  const CostModel model(tpuv4());
  sim::SweepOptions options;
  options.slices = {7};  // 7 x 8 divides none of GPT-3's sliced dimensions
  const auto gemms = sim::block_gemms(sim::gpt3(), weak_tokens(16));
  const BlockTuning t = tune_block(model, gemms, 16, options);
  EXPECT_EQ(t.best, -1);
  const std::string what = test::user_error_of([&] { t.best_mesh(); });
  EXPECT_NE(what.find("4x4: qkv.fwd"), std::string::npos) << what;
  EXPECT_NE(what.find("fewer slice candidates"), std::string::npos) << what;
}

// The validation: at each point the tuner's mesh and S per GEMM, emulated, are within 3%
// of the emulator's own optimum. The cost model's mean absolute error is printed (the paper:
// 5.1% against hardware); with the one effective FLOP/s of the paper's formula it is printed too.
TEST(EmulatorCheck, TheTunersChoiceIsWithinThreePercentOfTheEmulatorsOptimum) {
  const sim::SweepOptions options;
  const CostModel per_shape(tpuv4(), GemmRate::per_shape), effective(tpuv4(), GemmRate::effective);
  std::printf("%-14s %5s %10s %8s %8s %12s %8s\n", "model", "chips", "tuned", "gap", "MAE",
              "effective:gap", "MAE");
  for (const sim::LlmSpec* llm : {&sim::gpt3(), &sim::megatron_nlg()})
    for (int chips : {64, 128, 256}) {
      const auto gemms = sim::block_gemms(*llm, weak_tokens(chips));
      const BlockTuning t = tune_block(per_shape, gemms, chips, options);
      const EmulatorCheck c = check_against_emulator(tpuv4(), t, gemms, options);
      const BlockTuning te = tune_block(effective, gemms, chips, options);
      const EmulatorCheck ce = check_against_emulator(tpuv4(), te, gemms, options);
      std::printf("%-14s %5d %6dx%-3d %7.2f%% %7.2f%% %11.2f%% %7.2f%%\n", llm->name.c_str(), chips,
                  c.tuned.rows, c.tuned.cols, 100 * c.gap(), 100 * c.mean_absolute_error(),
                  100 * ce.gap(), 100 * ce.mean_absolute_error());
      EXPECT_LE(c.gap(), 0.03) << llm->name << " at " << chips;
      EXPECT_GE(c.gap(), -1e-9) << "the emulator's optimum is its best";
      EXPECT_LT(c.mean_absolute_error(), 0.05) << llm->name << " at " << chips;
      EXPECT_EQ(c.meshes.size(), static_cast<std::size_t>(std::count_if(
                                     t.meshes.begin(), t.meshes.end(),
                                     [](const MeshChoice& m) { return m.usable(); })));
    }
}

TrainingModel gpt3_model(std::size_t blocks, std::size_t batch) {
  return TrainingModel{sim::gpt3(), blocks, 2048, batch};
}

TrainingConfig config(int dp, int pp, int rows, int cols, std::size_t microbatches) {
  TrainingConfig c;
  c.dp = dp;
  c.pp = pp;
  c.rows = rows;
  c.cols = cols;
  c.microbatches = microbatches;
  return c;
}

// Phases 1 and 2 for a configuration's micro-batch on its mesh.
MeshChoice stage_mesh(const CostModel& model, const TrainingModel& m, const TrainingConfig& c) {
  const auto gemms =
      sim::block_gemms(m.llm, c.microbatch_tokens(m), sim::AttentionLayout::standard);
  return tune_mesh(model, gemms, c.rows, c.cols, sim::SweepOptions{});
}

TEST(StepEstimate, OneStageIsTheBlocksGemmsOneAfterAnother) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel m = gpt3_model(8, 64);
  const TrainingConfig c = config(1, 1, 8, 8, 1);
  const MeshChoice mesh = stage_mesh(model, m, c);
  ASSERT_TRUE(mesh.usable());
  const StepEstimate e = estimate_step(model, m, c, mesh);
  EXPECT_NEAR(e.compute, 8 * mesh.seconds, 1e-12);
  EXPECT_EQ(e.bubble, 0.0);
  EXPECT_EQ(e.pp_transfers, 0.0);
  EXPECT_EQ(e.dp_exposed, 0.0);
}

TEST(StepEstimate, PipelineBubbleFollowsTheSchedule) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel m = gpt3_model(16, 64);
  TrainingConfig c = config(1, 4, 4, 4, 8);
  const MeshChoice mesh = stage_mesh(model, m, c);
  ASSERT_TRUE(mesh.usable());
  const StepEstimate one_f_one_b = estimate_step(model, m, c, mesh);
  EXPECT_NEAR(one_f_one_b.bubble / one_f_one_b.compute, 3.0 / 8, 1e-12);  // (p - 1) / m
  EXPECT_GT(one_f_one_b.pp_transfers, 0.0);
  c.schedule = PipelineSchedule::interleaved;
  c.virtual_stages = 2;
  const StepEstimate interleaved = estimate_step(model, m, c, mesh);
  EXPECT_NEAR(interleaved.bubble / interleaved.compute, 3.0 / 16, 1e-12);  // (p - 1) / (v m)
  EXPECT_NEAR(interleaved.compute, one_f_one_b.compute, 1e-9);
  EXPECT_GT(interleaved.pp_transfers, one_f_one_b.pp_transfers);
  // GPipe holds every micro-batch's activations, 1F1B at most p of them on stage 0.
  c.schedule = PipelineSchedule::gpipe;
  c.virtual_stages = 1;
  const MemoryEstimate gpipe = estimate_memory(m, c, mesh, TensorBytes::pure(2));
  c.schedule = PipelineSchedule::one_f_one_b;
  const MemoryEstimate ofob = estimate_memory(m, c, mesh, TensorBytes::pure(2));
  EXPECT_NEAR(gpipe.activations / ofob.activations, 8.0 / 4, 1e-12);
}

// A plan for a bf16 run (meshslice-tune --set precision=bf16) counts its tensors as the run
// keeps them: float weights (the master weights), gradients and optimizer state as a float
// run's, a bf16 copy of the blocks' weight matrices, the FC layers' saved inputs, QKV's and
// FF1's saved outputs and the gathered slices at 2 bytes; its dp gradients and stage-to-stage
// activations move float (ZeRO-1's gathers of the updated weights bf16). The emulated chip's own
// model (pure) keeps and moves all at 2.
TEST(StepEstimate, Bf16RunKeepsFloatWeightsAndHalvesOnlyWhatItRounds) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel m = gpt3_model(8, 64);
  const TrainingConfig c = config(2, 2, 4, 4, 4);
  const MeshChoice mesh = stage_mesh(model, m, c);
  ASSERT_TRUE(mesh.usable());
  const TensorBytes as_float = TensorBytes::of_run("float"), as_bf16 = TensorBytes::of_run("bf16");
  const MemoryEstimate f = estimate_memory(m, c, mesh, as_float);
  const MemoryEstimate b = estimate_memory(m, c, mesh, as_bf16);
  const MemoryEstimate pure = estimate_memory(m, c, mesh, TensorBytes::pure(2));
  const double copies = block_fc_weights(m.llm.dims()) * double(c.blocks_per_chunk(m)) *
                        double(c.virtual_stages) / double(c.tp()) * 2;
  EXPECT_EQ(b.weights, f.weights + copies);
  EXPECT_EQ(b.gradients, f.gradients);
  EXPECT_EQ(b.optimizer, f.optimizer);
  EXPECT_EQ(pure.weights, f.weights / 2);
  // Of the 17 H values a GeLU block keeps per token (and the probabilities), 13 H in bf16.
  const double h = static_cast<double>(m.llm.hidden),
               probabilities = m.llm.heads * double(m.seq_len);
  EXPECT_NEAR(b.activations / f.activations,
              (4 * h + probabilities + 13 * h / 2) / (17 * h + probabilities), 1e-12);
  EXPECT_LT(b.workspaces, f.workspaces);
  EXPECT_GE(b.workspaces, pure.workspaces);
  EXPECT_NEAR(pure.workspaces, f.workspaces / 2, 1e-6 * f.workspaces);
  // Its dp and pp messages are float: as a float run's, twice the pure model's.
  const StepEstimate bs = estimate_step(model, m, c, mesh, nullptr, &as_bf16);
  const StepEstimate fs = estimate_step(model, m, c, mesh, nullptr, &as_float);
  const StepEstimate ps = estimate_step(model, m, c, mesh);
  EXPECT_EQ(bs.pp_transfers, fs.pp_transfers);
  EXPECT_EQ(bs.dp_exposed, fs.dp_exposed);
  EXPECT_GT(bs.pp_transfers, ps.pp_transfers);
  // With ZeRO-1 the weight matrices' fp32 masters are sharded over dp as well (each replica
  // keeps its row of them; the bf16 copies stay whole), and the all-gathers after the update
  // move the copies: less exposed than a float run's, more than the pure model's.
  TrainingConfig zero = c;
  zero.zero = true;
  const double masters = copies / 2 * 4;  // the blocks' weight matrices, in float
  EXPECT_EQ(estimate_memory(m, zero, mesh, as_bf16).weights,
            b.weights - masters * (1.0 - 1.0 / zero.dp));
  EXPECT_EQ(estimate_memory(m, zero, mesh, as_float).weights, f.weights);
  const double zero_bf16 = estimate_step(model, m, zero, mesh, nullptr, &as_bf16).dp_exposed;
  const double zero_float = estimate_step(model, m, zero, mesh, nullptr, &as_float).dp_exposed;
  EXPECT_LT(zero_bf16, zero_float);
  EXPECT_GT(zero_bf16, estimate_step(model, m, zero, mesh).dp_exposed);
}

TEST(StepEstimate, CheckpointingAndZeroTradeTimeForMemory) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel m = gpt3_model(8, 64);
  TrainingConfig c = config(4, 1, 4, 4, 1);
  const MeshChoice mesh = stage_mesh(model, m, c);
  ASSERT_TRUE(mesh.usable());
  const StepEstimate plain = estimate_step(model, m, c, mesh);
  const MemoryEstimate plain_memory = estimate_memory(m, c, mesh, TensorBytes::pure(2));
  EXPECT_GE(plain.dp_exposed, 0.0);
  c.checkpointing = true;
  const StepEstimate ckpt = estimate_step(model, m, c, mesh);
  double forward = 0;
  for (const TunedGemm& g : mesh.gemms) forward += g.gemm.pass == "fwd" ? g.seconds : 0;
  EXPECT_NEAR(ckpt.compute - plain.compute, 8 * forward, 1e-9);  // the forward recomputed
  EXPECT_LT(estimate_memory(m, c, mesh, TensorBytes::pure(2)).activations,
            plain_memory.activations / 4);
  c.checkpointing = false;
  c.zero = true;
  const StepEstimate zero = estimate_step(model, m, c, mesh);
  const MemoryEstimate zero_memory = estimate_memory(m, c, mesh, TensorBytes::pure(2));
  EXPECT_NEAR(zero_memory.optimizer, plain_memory.optimizer / 4, 1e-3);
  // An optimizer with one state tensor (SGD's momentum, Lion's) keeps half AdamW's.
  TrainingModel one_state = m;
  one_state.optimizer_states = 1;
  EXPECT_NEAR(estimate_memory(one_state, c, mesh, TensorBytes::pure(2)).optimizer,
              zero_memory.optimizer / 2, 1e-3);
  EXPECT_EQ(estimate_memory(one_state, c, mesh, TensorBytes::pure(2)).weights, zero_memory.weights);
  // Reduce-scatter plus all-gather moves what the all-reduce moves, but the all-gathers after the
  // update cannot hide behind the backward pass: never less exposed.
  EXPECT_GE(zero.dp_exposed, plain.dp_exposed - 1e-12);
  EXPECT_GT(zero.dp_exposed, 0.0);
}

// A language model's head: on the last stage once per micro-batch, its tables in the memory.
TEST(StepEstimate, TheHeadRunsOnTheLastStageOncePerMicroBatch) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel blocks_only = gpt3_model(16, 64);
  TrainingModel m = blocks_only;
  m.vocab = 50257;
  TrainingConfig c = config(1, 4, 4, 4, 8);
  const MeshChoice mesh = stage_mesh(model, m, c);
  const MeshChoice head = tune_lm_head(model, m.llm.hidden, m.vocab, c.microbatch_tokens(m), c.rows,
                                       c.cols, sim::SweepOptions{});
  ASSERT_TRUE(mesh.usable());
  ASSERT_TRUE(head.usable());
  EXPECT_EQ(head.gemms.front().gemm.problem.N + head.gemms.front().gemm.problem.M +
                head.gemms.front().gemm.problem.K,
            c.microbatch_tokens(m) + m.llm.hidden + 50272)  // 50257 padded to 32 = 8 x lcm(4, 4)
      << "the head's GEMM is T x H by H x V_p in some dataflow";
  const StepEstimate without = estimate_step(model, blocks_only, c, mesh);
  const StepEstimate with = estimate_step(model, m, c, mesh, &head);
  EXPECT_NEAR(with.compute - without.compute, 8 * head.seconds, 1e-12);
  EXPECT_NEAR(with.bubble - without.bubble, 3 * head.seconds, 1e-12);
  // Stage 0 holds the embedding; with one stage, the head besides, and a micro-batch's logits.
  const double table = 50272.0 * m.llm.hidden / c.tp() * 2;
  EXPECT_NEAR(estimate_memory(m, c, mesh, TensorBytes::pure(2), &head).weights -
                  estimate_memory(blocks_only, c, mesh, TensorBytes::pure(2)).weights,
              table, 1e-3);
  c.pp = 1;
  const MemoryEstimate one_stage = estimate_memory(m, c, mesh, TensorBytes::pure(2), &head);
  const MemoryEstimate one_stage_blocks =
      estimate_memory(blocks_only, c, mesh, TensorBytes::pure(2));
  EXPECT_NEAR(one_stage.weights - one_stage_blocks.weights, 2 * table, 1e-3);
  EXPECT_NEAR(one_stage.activations - one_stage_blocks.activations,
              c.microbatch_tokens(m) * 50272.0 / c.tp() * 2, 1e-3);
  EXPECT_GT(one_stage.workspaces, one_stage_blocks.workspaces);
  // A bf16 run's head keeps a bf16 copy of its weight (2 bytes an element), as the blocks'
  // weight matrices do.
  const TensorBytes as_bf16 = TensorBytes::of_run("bf16"), as_float = TensorBytes::of_run("float");
  const auto copies = [&](const TrainingModel& model_of, const MeshChoice* head_of) {
    return estimate_memory(model_of, c, mesh, as_bf16, head_of).weights -
           estimate_memory(model_of, c, mesh, as_float, head_of).weights;
  };
  EXPECT_NEAR(copies(m, &head) - copies(blocks_only, nullptr), table, 1e-3);
  EXPECT_NEAR(step_flops(m) - step_flops(blocks_only), 6.0 * 64 * 2048 * m.llm.hidden * 50257, 1e3);
}

// The planner's mesh counts the head, and every candidate carries the head it was timed with.
TEST(JointPlanner, ALanguageModelsCandidatesCountItsHead) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  TrainingModel m = gpt3_model(8, 64);
  m.vocab = 50257;
  PlannerOptions o;
  o.memory_bytes = 32.0 * (1 << 30);
  const PlanSearch search = plan_training(model, m, 64, o);
  ASSERT_FALSE(search.ranked.empty());
  for (const Candidate& k : search.ranked) {
    ASSERT_NE(k.head, nullptr);
    EXPECT_EQ(k.head->rows, k.config.rows);
    EXPECT_EQ(k.head->cols, k.config.cols);
    const StepEstimate again = estimate_step(model, m, k.config, *k.mesh, k.head.get());
    EXPECT_EQ(again.total(), k.step.total());
    EXPECT_GT(k.step.compute, estimate_step(model, gpt3_model(8, 64), k.config, *k.mesh).compute);
  }
}

TEST(JointPlanner, RanksWhatFitsAndCountsWhatDoesNot) {
  const CostModel model(tpuv4(), GemmRate::per_shape);
  const TrainingModel m = gpt3_model(96, 128);
  PlannerOptions o;
  o.memory_bytes = 32.0 * (1 << 30);
  const PlanSearch search = plan_training(model, m, 256, o);
  std::printf("GPT-3 on 256 chips: %zu fit, best %s, %.1f ms, searched in %.3f s\n",
              search.feasible, search.best().config.str().c_str(), search.best().step.total() * 1e3,
              search.seconds);
  ASSERT_FALSE(search.ranked.empty());
  EXPECT_LE(search.ranked.size(), o.top);
  EXPECT_GT(search.rejected.at("memory"), 0u);
  for (std::size_t i = 0; i < search.ranked.size(); ++i) {
    const Candidate& c = search.ranked[i];
    EXPECT_EQ(c.config.chips(), 256);
    EXPECT_LE(c.memory.total(), o.memory_bytes);
    EXPECT_EQ(m.global_batch % (c.config.dp * c.config.microbatches), 0u);
    EXPECT_EQ(c.config.sequences_per_microbatch(m) % c.config.rows, 0u);
    if (i > 0) {
      EXPECT_GE(c.step.total(), search.ranked[i - 1].step.total());
    }
    EXPECT_GT(c.flop_utilization, 0.0);
    EXPECT_LT(c.flop_utilization, 1.0);
  }
  // Without checkpointing, ZeRO-1 or micro-batches, GPT-3's 96 blocks do not fit 32 GiB chips.
  PlannerOptions tight = o;
  tight.checkpointing = {false};
  tight.zero = {false};
  tight.microbatches = {1};
  tight.schedules = {PipelineSchedule::one_f_one_b};
  tight.memory_bytes = 4.0 * (1 << 30);
  const PlanSearch none = plan_training(model, m, 256, tight);
  EXPECT_TRUE(none.ranked.empty());
  const std::string what = test::user_error_of([&] { none.best(); });
  EXPECT_NE(what.find("no configuration fits"), std::string::npos) << what;
  EXPECT_NE(what.find(": memory: "), std::string::npos) << what;
}

}  // namespace
}  // namespace meshslice::tune

namespace meshslice::tune {
namespace {

// Synthetic samples of t = launch + steps (sync + bytes / bw) over sizes and ring sizes.
std::vector<CommSample> synthetic(const std::string& op, const std::vector<int>& ranks,
                                  double launch, double sync, double bw, double noise = 0) {
  std::vector<CommSample> out;
  int i = 0;
  for (int p : ranks)
    for (double bytes = 8192; bytes <= 64.0 * 1024 * 1024; bytes *= 2, ++i) {
      const int steps = op == "shift" ? 1 : p - 1;
      const double wobble = 1 + noise * ((i % 3) - 1);  // -noise, 0, +noise in turn
      out.push_back({op, p, 1, bytes, (launch + steps * (sync + bytes / bw)) * wobble});
    }
  return out;
}

TEST(Calibration, TheLinkFitRecoversItsConstants) {
  const hw::LinkParams two_sizes = fit_link(synthetic("all_gather", {2, 4}, 10e-6, 3e-6, 5e9));
  EXPECT_NEAR(two_sizes.launch_s, 10e-6, 1e-9);
  EXPECT_NEAR(two_sizes.sync_s, 3e-6, 1e-9);
  EXPECT_NEAR(two_sizes.bandwidth, 5e9, 1e3);
  // One ring size: sync cannot be told from launch, which takes both.
  const hw::LinkParams one_size = fit_link(synthetic("reduce_scatter", {2}, 10e-6, 3e-6, 5e9));
  EXPECT_EQ(one_size.sync_s, 0.0);
  EXPECT_NEAR(one_size.launch_s, 13e-6, 1e-9);
  EXPECT_NEAR(one_size.bandwidth, 5e9, 1e3);
  // Noise of +-5% per point: the constants come back near, and never negative.
  const hw::LinkParams noisy = fit_link(synthetic("all_gather", {2, 4}, 10e-6, 0, 5e9, 0.05));
  EXPECT_GE(noisy.sync_s, 0.0);
  EXPECT_GE(noisy.launch_s, 0.0);
  EXPECT_NEAR(noisy.bandwidth, 5e9, 0.1 * 5e9);
  EXPECT_THROW(fit_link({{"shift", 2, 1, 8192, 1e-5}}), UserError);  // one size fits nothing
}

TEST(Calibration, TheFittedMachinePredictsItsSamples) {
  hw::Machine m;
  m.name = "synthetic";
  const std::vector<GemmSample> gemms = {{512, 512, 512, 2.0 * 512 * 512 * 512 / 50e9},
                                         {1024, 1024, 1024, 2.0 * 1024 * 1024 * 1024 / 100e9}};
  m.chip = fit_chip(gemms, 10e9, 8.0 * (1 << 30), 4);
  EXPECT_NEAR(m.chip.utilization_peak_flops, 100e9, 1);
  EXPECT_NEAR(m.chip.peak_flops(), 100e9, 1);
  const auto ag = synthetic("all_gather", {2, 4}, 10e-6, 3e-6, 5e9);
  const auto shift = synthetic("shift", {2}, 4e-6, 0, 8e9);
  for (auto& set : m.ici.kinds[static_cast<int>(hw::CommKind::all_gather)]) set = fit_link(ag);
  for (auto& set : m.ici.kinds[static_cast<int>(hw::CommKind::send_recv)]) set = fit_link(shift);
  m.ici.ring_directions = 1;
  const hw::MachineModel model(m);
  std::vector<CommSample> all = ag;
  all.insert(all.end(), shift.begin(), shift.end());
  for (const FitError& e : fit_errors(model, all, gemms)) {
    if (e.what == "gemm") {
      EXPECT_EQ(e.points, 2u);
      EXPECT_GT(e.max, 0.1);  // 512^3 ran at half the peak; the chip model runs it near the peak
      continue;
    }
    EXPECT_LT(e.max, 1e-6) << e.what;
    EXPECT_EQ(e.points, e.what == "shift" ? shift.size() : ag.size()) << e.what;
  }
}

}  // namespace
}  // namespace meshslice::tune
