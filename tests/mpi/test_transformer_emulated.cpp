// meshslice-train's hardware mode: the transformer over sim::CombinedExecutor trains exactly as
// over the real executor (same losses, same weights, bit for bit), and the emulated chip times
// every op of the step: all its GEMMs (the FC layers' and attention's, counted here from the
// shapes), its re-layouts, the dp reductions and the caller's own kernels.
#include <gtest/gtest.h>

#include <mpi.h>

#include <string>
#include <type_traits>
#include <vector>

#include "exec/combined_executor.hpp"
#include "exec/null_executor.hpp"
#include "exec/real_executor.hpp"
#include "model/block_layers.hpp"
#include "model/trainer_impl.hpp"
#include "model/transformer_impl.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"

namespace meshslice::testing {
namespace {

using Emulated = sim::CombinedExecutor<RealExecutor<double>>;

const hw::MachineModel& tpuv4() {
  static const hw::MachineModel model(hw::load_machine(hw::machine_path("tpuv4-sim")));
  return model;
}

ModelShape shape() {
  ModelShape s;
  s.hidden = 24;
  s.heads = 6;
  s.blocks = 2;
  s.seq_len = 40;  // two causal row blocks of attention, the second partial
  s.sequences = 4;
  return s;
}

OptimizerSettings adamw() {
  OptimizerSettings o;
  o.kind = parse_optimizer("adamw");
  o.lr = 1e-2;
  o.total_steps = 4;
  return o;
}

FcPlan fc(Stationary s, bool transposed, int slices) {
  FcPlan p;
  p.stationary = s;
  p.transposed = transposed;
  const GemmChoice c{Algorithm::meshslice, {slices, 1}};
  p.gemms = {c, c, c};
  return p;
}

// Every row of Table 1, so the step re-lays activations out.
ModelPlan relayout_plan() {
  return {{fc(Stationary::X, false, 2), fc(Stationary::W, false, 1), fc(Stationary::W, true, 2),
           fc(Stationary::Y, false, 2)},
          std::nullopt};
}

// One chip's GEMM flops in a training step, from the shapes alone: each FC layer's three GEMMs
// split evenly over the mesh, and attention's causal row blocks (q k^T and p v forward, four
// products of the same sizes backward) for the chip's sequences and heads.
double chip_step_flops(const ModelShape& s, int rows, int cols) {
  double fc_flops = 0;
  for (const BlockFcLayer& layer : block_fc_layers(s.dims()))
    fc_flops += 3 * 2.0 * s.tokens() * layer.in * layer.out;
  const AttentionShape a{s.sequences / rows, s.seq_len, s.heads / cols, s.head_dim()};
  double attention = 0;
  for (std::size_t i = 0; i < a.blocks(); ++i) {
    const double block_rows = static_cast<double>(a.block_end(i) - i * a.block_rows());
    attention += 6 * 2.0 * block_rows * a.block_end(i) * a.dim;
  }
  return s.blocks * (fc_flops / (rows * cols) + a.pairs() * attention);
}

// The latest of every rank's `t` over `comm`.
double latest(double t, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  return t;
}

// The run's barrier: every emulated chip starts the step at the latest clock (pipeline stages
// wait for each other's emulated work, so their clocks differ between steps). Returns it.
template <class Executor>
double align_clocks(Executor& ex, MPI_Comm comm) {
  const double start = latest(ex.emulated().now(), comm);
  ex.emulated().advance_to(start);
  return start;
}

TEST(TransformerEmulated, TrainsAsTheRealExecutorAndTimesEveryOpOfTheStep) {
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  const ModelShape s = shape();
  const ModelPlan plan = relayout_plan();
  const TaskSeeds seeds{21, 22, 23};
  RealExecutor<double> alone(torus(), CommOptions{});
  Trainer<RealExecutor<double>> real_trainer(alone, s, plan, adamw(), seeds);
  RealExecutor<double> real(torus(), CommOptions{});
  std::vector<TraceEvent> events;
  Emulated ex(real, tpuv4(), &events);
  Trainer<Emulated> trainer(ex, s, plan, adamw(), seeds);

  std::vector<double> step_seconds;
  for (int step = 1; step <= 4; ++step) {
    const double start = align_clocks(ex, torus().comm());
    const sim::SimTotals before = ex.emulated().totals();
    events.clear();
    const auto relayouts_before = trainer.student().relayouts().count;
    const auto got = trainer.step();
    const auto want = real_trainer.step();
    ASSERT_EQ(got.loss, want.loss) << "step " << step;
    ASSERT_EQ(got.grad_norm, want.grad_norm) << "step " << step;
    const sim::SimTotals after = ex.emulated().totals();
    step_seconds.push_back(latest(after.seconds, torus().comm()) - start);

    // This chip's blocks: its pipeline stage's share.
    ModelShape held = s;
    held.blocks = trainer.split().blocks(static_cast<std::size_t>(torus().coord(Axis::pp)));
    EXPECT_NEAR(after.flops - before.flops, chip_step_flops(held, rows, cols),
                1e-9 * chip_step_flops(held, rows, cols))
        << "step " << step << ": a GEMM of the step was not emulated, or one twice";
    std::size_t relayouts = 0, dp_reductions = 0, norms = 0;
    for (const TraceEvent& e : events) {
      relayouts += e.name == "relayout" && e.lane == TraceLane::tp_links;
      dp_reductions += e.name == "all_reduce" && e.lane == TraceLane::dp_links;
      norms += e.name == "rmsnorm" && e.lane == TraceLane::compute;
    }
    EXPECT_EQ(relayouts, trainer.student().relayouts().count - relayouts_before);
    EXPECT_GT(relayouts, 0u);
    EXPECT_EQ(dp_reductions, held.blocks * block_param_count());
    EXPECT_EQ(norms, 2 * 2 * held.blocks);  // two norms per block, each two kernels
    // The cores' work fits in the step, and the memory-bound kernels took time.
    EXPECT_GE(after.seconds - start,
              (after.compute - before.compute) + (after.local - before.local) - 1e-15);
    EXPECT_GT(after.local - before.local, 0.0);
  }
  // The emulated machine's step is the same every step: nothing of one step leaks into the next.
  for (std::size_t i = 1; i < step_seconds.size(); ++i)
    EXPECT_NEAR(step_seconds[i], step_seconds[0], 1e-12 * step_seconds[0]);

  for (std::size_t b = 0; b < s.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(trainer.student().gather(b, kind), real_trainer.student().gather(b, kind))
          << "block " << b << " " << param_kind_name(kind);
}

// The data-free emulation (sim::NullExecutor, one rank per pipeline stage standing for its chips)
// times the step exactly as the combined run of every chip does: the same ops reach the emulated
// chip, and the chips of a stage and the replicas are alike. In T, or (`bf16`: float) with the
// GEMM operands in bf16, where the data-free model keeps in bf16 what the real one keeps (with
// ZeRO-1 over replicas: the masters' rows, the bf16 gathers after the update).
template <class T>
void expect_data_free_emulation_as_the_real_run(bool bf16) {
  const ModelShape s = shape();
  const ModelPlan plan = relayout_plan();
  StepSettings step;
  step.micro_batches = torus().size(Axis::pp) > 1 && torus().size(Axis::row) == 1 ? 2 : 1;
  step.zero = bf16 && torus().size(Axis::dp) > 1;
  const auto emulated_steps = [&](auto& ex, auto& trainer, MPI_Comm comm) {
    std::vector<double> seconds;
    for (int i = 0; i < 3; ++i) {
      const double start = align_clocks(ex, comm);
      trainer.step();
      ex.wait_all();
      seconds.push_back(latest(ex.emulated().totals().seconds, comm) - start);
    }
    return seconds;
  };
  RealExecutor<T> real(torus(), CommOptions{});
  if constexpr (std::is_same_v<T, float>)
    if (bf16) real.round_gemm_operands_to_bf16(fastest_bf16_route());
  sim::CombinedExecutor<RealExecutor<T>> combined(real, tpuv4());
  Trainer<sim::CombinedExecutor<RealExecutor<T>>> trainer(combined, s, plan, adamw(), TaskSeeds{},
                                                          step);
  const std::vector<double> want = emulated_steps(combined, trainer, torus().comm());
  EXPECT_EQ(sharded_masters(trainer.student().parameters()) > 0, step.zero)
      << "ZeRO-1 of a bf16 run shards the masters";

  // Chip (0, 0) of replica 0 of each stage, one MPI rank per stage.
  const bool stands_in = torus().coord(Axis::row) == 0 && torus().coord(Axis::col) == 0 &&
                         torus().coord(Axis::dp) == 0;
  MPI_Comm stage_ranks;
  MPI_Comm_split(torus().comm(), stands_in ? 0 : MPI_UNDEFINED, torus().coord(Axis::pp),
                 &stage_ranks);
  if (!stands_in) return;
  {
    const Torus stages(stage_ranks, MeshShape{1, torus().size(Axis::pp), 1, 1});
    sim::NullExecutor<T> null(stages, torus().shape());
    if (bf16) null.keep_operands_in_bf16();
    sim::CombinedExecutor<sim::NullExecutor<T>> free(null, tpuv4());
    Trainer<sim::CombinedExecutor<sim::NullExecutor<T>>> data_free(free, s, plan, adamw(),
                                                                   TaskSeeds{}, step);
    const std::vector<double> got = emulated_steps(free, data_free, stages.comm());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-12 * want[i]) << "step " << i + 1;
    // The memory estimate counts the same buffers by their shapes (in bf16: the weights' bf16
    // copies, the tensors kept in bf16), but for the workspaces: the collectives' scratch and
    // the re-layouts' exchange buffers are not planned without data.
    const MemoryUse a = data_free.student().memory(), b = trainer.student().memory();
    EXPECT_EQ(a.parameters, b.parameters);
    EXPECT_EQ(a.activations, b.activations);
    EXPECT_EQ(a.total() - a.workspaces, b.total() - b.workspaces);
    EXPECT_LE(a.workspaces, b.workspaces);
  }
  MPI_Comm_free(&stage_ranks);
}

TEST(TransformerEmulated, DataFreeEmulationTimesTheStepAsTheRealRunDoes) {
  expect_data_free_emulation_as_the_real_run<double>(false);
}

TEST(TransformerEmulated, DataFreeEmulationOfABf16RunKeepsWhatItKeeps) {
  expect_data_free_emulation_as_the_real_run<float>(true);
}

}  // namespace
}  // namespace meshslice::testing
