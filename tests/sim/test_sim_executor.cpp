// The emulating executor: its clocks against the hardware model's formulas, and the
// properties of the algorithms it must reproduce (overlap where the dependencies allow it,
// none where they do not).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "exec/sim_executor.hpp"
#include "gemm/run_gemm.hpp"
#include "sim/emulate.hpp"

namespace meshslice::sim {
namespace {

const hw::MachineModel& tpuv4() {
  static const hw::MachineModel model(hw::load_machine(hw::machine_path("tpuv4-sim")));
  return model;
}

// The same machine with NIC/HBM contention off, for exact hand computations.
const hw::MachineModel& tpuv4_quiet() {
  static const hw::MachineModel model = [] {
    hw::Machine m = hw::load_machine(hw::machine_path("tpuv4-sim"));
    m.ici.nic_hbm_contention = false;
    return hw::MachineModel(m);
  }();
  return model;
}

TEST(SimExecutor, CollectiveTakesTheIciModelsTime) {
  SimExecutor ex(tpuv4_quiet(), 8, 4);
  const SimMat local = ex.alloc(1024, 512, "a"), out = ex.alloc(1024, 2048, "b");
  const auto op = ex.start_all_gather(Axis::col, local, out, MatrixDim::cols);
  EXPECT_EQ(ex.now(), 0.0);  // starting does not block the thread
  ex.wait(op);
  const double expected = tpuv4().ici.all_gather(hw::Ring::dim1, 4, 1024.0 * 512 * 2).total();
  EXPECT_DOUBLE_EQ(ex.now(), expected);
  EXPECT_DOUBLE_EQ(out.ready(), expected);
  const SimTotals t = ex.totals();
  EXPECT_NEAR(t.launch + t.sync + t.transfer, expected, 1e-15);
}

TEST(SimExecutor, GemmOverlapsCommunicationOnAnotherEngine) {
  SimExecutor ex(tpuv4_quiet(), 8, 4);
  const SimMat a = ex.alloc(4096, 4096, "a"), b = ex.alloc(4096, 4096, "b"),
               c = ex.alloc(4096, 4096, "c");
  const SimMat x = ex.alloc(2048, 1024, "x"), y = ex.alloc(2048, 8192, "y");
  const auto op = ex.start_all_gather(Axis::row, x, y, MatrixDim::cols);
  ex.gemm(1, a, false, b, false, 0, c);
  const double gemm = tpuv4().chip.gemm(4096, 4096, 4096, false).seconds;
  EXPECT_DOUBLE_EQ(ex.now(), gemm);  // the GEMM did not wait for the collective
  ex.wait(op);
  const double comm = tpuv4().ici.all_gather(hw::Ring::dim0, 8, 2048.0 * 1024 * 2).total();
  EXPECT_DOUBLE_EQ(ex.now(), std::max(gemm, comm));
  EXPECT_DOUBLE_EQ(ex.totals().compute, gemm);
}

TEST(SimExecutor, OperationsOnOneRingRunInIssueOrderAndReadersWaitForData) {
  SimExecutor ex(tpuv4_quiet(), 4, 4);
  const SimMat x = ex.alloc(512, 512, "x"), y = ex.alloc(512, 2048, "y"),
               z = ex.alloc(512, 2048, "z");
  ex.start_all_gather(Axis::row, x, y, MatrixDim::cols);
  ex.start_all_gather(Axis::row, x, z, MatrixDim::cols);
  const double one = tpuv4().ici.all_gather(hw::Ring::dim0, 4, 512.0 * 512 * 2).total();
  EXPECT_DOUBLE_EQ(y.ready(), one);
  EXPECT_DOUBLE_EQ(z.ready(), 2 * one);
  // A GEMM reading z starts when z has arrived, even without an explicit wait.
  const SimMat w = ex.alloc(2048, 128, "w"), c = ex.alloc(512, 128, "c");
  ex.gemm(1, z, false, w, false, 0, c);
  EXPECT_DOUBLE_EQ(ex.now(), 2 * one + tpuv4().chip.gemm(512, 128, 2048, false).seconds);
}

// A view of some rows shares its matrix's write time both ways, and has the rows' shape.
TEST(SimExecutor, RowsOfAMatrixShareItsWriteTime) {
  SimExecutor ex(tpuv4_quiet(), 4, 4);
  const SimMat x = ex.alloc(512, 256, "x"), y = ex.alloc(128, 256, "y");
  const SimMat view = ex.rows(x, 128, 256);
  EXPECT_EQ(view.extent(0), 256u);
  EXPECT_EQ(view.extent(1), 256u);
  view.mark_written(2.0);
  EXPECT_DOUBLE_EQ(x.ready(), 2.0);
  x.mark_written(3.0);
  EXPECT_DOUBLE_EQ(view.ready(), 3.0);
  // Taking the view costs nothing; reading it waits for the matrix.
  EXPECT_DOUBLE_EQ(ex.now(), 0.0);
  ex.copy(ex.rows(x, 0, 128), y);
  EXPECT_GT(y.ready(), 3.0);
  EXPECT_THROW(ex.rows(x, 400, 128), std::logic_error);
}

// One engine per direction of travel on each ring: opposite shifts run at once, shifts the same
// way queue, and a collective (both ways) waits for both directions.
TEST(SimExecutor, EachRingDirectionIsAnEngineOfItsOwn) {
  SimExecutor ex(tpuv4_quiet(), 8, 4);
  const SimMat x = ex.alloc(512, 512, "x"), y = ex.alloc(512, 512, "y"),
               z = ex.alloc(512, 512, "z"), w = ex.alloc(512, 512, "w"),
               all = ex.alloc(4096, 512, "all");
  const double bytes = 512.0 * 512 * 2;
  const double hop = tpuv4().ici.shift(hw::Ring::dim0, 8, 1, bytes).total();
  ex.start_shift(Axis::row, x, y, 1);
  ex.start_shift(Axis::row, x, z, -1);
  EXPECT_DOUBLE_EQ(y.ready(), hop);
  EXPECT_DOUBLE_EQ(z.ready(), hop);    // the other direction: at the same time
  ex.start_shift(Axis::row, x, w, 7);  // 7 places forward is 1 back, the shorter way
  EXPECT_DOUBLE_EQ(w.ready(), 2 * hop);
  ex.start_shift(Axis::row, x, w, 1);
  EXPECT_DOUBLE_EQ(w.ready(), 2 * hop);  // forward was free since the first shift ended
  const auto gather = ex.start_all_gather(Axis::row, x, all, MatrixDim::rows);
  ex.wait(gather);
  EXPECT_DOUBLE_EQ(ex.now(), 2 * hop + tpuv4().ici.all_gather(hw::Ring::dim0, 8, bytes).total());
  // Pipeline stages: activations forward and gradients backward at once; a send to the next
  // stage and a receive from the previous one travel the same way and queue.
  SimExecutor stage(tpuv4_quiet(), 1, 1);
  stage.set_outer_axes(1, 0, 4, 1);
  const SimMat act = stage.alloc(1, 1 << 19, "act"), grad = stage.alloc(1, 1 << 19, "grad"),
               in = stage.alloc(1, 1 << 19, "in");
  const double send = tpuv4().ici.send_recv(hw::Ring::pp, double(1 << 20)).total();
  stage.start_send(Axis::pp, act, 1);
  stage.start_send(Axis::pp, grad, -1);
  stage.start_recv(Axis::pp, in, -1);
  EXPECT_DOUBLE_EQ(grad.ready(), send);
  EXPECT_DOUBLE_EQ(in.ready(), 2 * send);
}

TEST(SimExecutor, RingSizesAndCoordinatesOfTheEmulatedChip) {
  SimExecutor ex(tpuv4(), 8, 4, 3, 2);
  EXPECT_EQ(ex.size(Axis::row), 8);
  EXPECT_EQ(ex.size(Axis::col), 4);
  EXPECT_EQ(ex.size(Axis::tp), 32);
  EXPECT_EQ(ex.coord(Axis::tp), 3 * 4 + 2);
  EXPECT_THROW(SimExecutor(tpuv4(), 2, 2, 2, 0), UserError);
}

TEST(SimExecutor, ContentionSlowsHbmBoundGemmsUnderCommunication) {
  // A thin accumulating GEMM is HBM-bound; the same GEMM under an all-gather gets less HBM.
  auto run = [](bool overlapped) {
    SimExecutor ex(tpuv4(), 16, 16);
    const SimMat a = ex.alloc(8, 16384, "a"), b = ex.alloc(16384, 16384, "b"),
                 c = ex.alloc(8, 16384, "c");
    if (overlapped) {
      const SimMat x = ex.alloc(8192, 4096, "x"), y = ex.alloc(8192, 65536, "y");
      ex.start_all_gather(Axis::col, x, y, MatrixDim::cols);
    }
    ex.gemm(1, a, false, b, false, 1, c);
    return ex.totals().compute;
  };
  EXPECT_GT(run(true), 1.02 * run(false));
}

// Data-parallel and pipeline ops are timed on the machine's dp/pp links, on engines of their own:
// they overlap the cores and the mesh rings.
TEST(SimExecutor, DataParallelAndPipelineOpsUseTheirOwnLinks) {
  SimExecutor ex(tpuv4(), 4, 4);
  ex.set_outer_axes(8, 3, 4, 1);
  EXPECT_EQ(ex.size(Axis::dp), 8);
  EXPECT_EQ(ex.coord(Axis::dp), 3);
  EXPECT_EQ(ex.size(Axis::pp), 4);
  EXPECT_EQ(ex.coord(Axis::pp), 1);
  const double bytes = 1 << 20;  // element_bytes = 2
  const SimMat grad = ex.alloc(1, (1 << 20) / 2, "grad"), act = ex.alloc(1, (1 << 20) / 2, "act");
  const auto reduce = ex.start_all_reduce(Axis::dp, grad, grad);
  const auto send = ex.start_send(Axis::pp, act, 1);
  const SimMat a = ex.alloc(1024, 1024, "a"), b = ex.alloc(1024, 1024, "b"),
               c = ex.alloc(1024, 1024, "c");
  ex.gemm(1, a, false, b, false, 0, c);
  const double gemm = tpuv4().chip.gemm(1024, 1024, 1024, false).seconds;
  const double all_reduce = tpuv4().ici.all_reduce(hw::Ring::dp, 8, bytes).total();
  const double send_recv = tpuv4().ici.send_recv(hw::Ring::pp, bytes).total();
  // Neither op held the cores (the GEMM only shares HBM bandwidth with the NIC).
  EXPECT_NEAR(ex.now(), gemm, 0.05 * gemm);
  EXPECT_LT(ex.now(), std::min(all_reduce, send_recv));
  ex.wait(reduce);
  ex.wait(send);
  EXPECT_DOUBLE_EQ(ex.now(), std::max({gemm, all_reduce, send_recv}));
  EXPECT_GT(all_reduce, 0);
  EXPECT_THROW(ex.set_outer_axes(2, 2, 1, 0), UserError);
}

// A plan drives the emulating executor too: creating it times nothing, and each run times the
// same ops as an unplanned call.
// A caller's own work (exec/caller_work.hpp): its GEMMs one after another on the cores, then
// its element traffic through HBM; a blocking collective holds the thread until it ends, after
// what the ring was already doing.
TEST(SimExecutor, CallersWorkIsTimedOnTheCoresAndItsCollectivesOnTheRings) {
  SimExecutor ex(tpuv4_quiet(), 2, 4);
  LocalWork work = LocalWork::streaming(3e6);
  work.gemms.push_back({16, 64, 512, 128, false});
  work.gemms.push_back({16, 512, 128, 64, true});
  ex.local_work("attention", work);
  const auto& chip = tpuv4().chip;
  const double gemms =
      16 * chip.gemm(64, 512, 128, false).seconds + 16 * chip.gemm(512, 128, 64, true).seconds;
  const double traffic = 3e6 * 2 / tpuv4().machine.chip.hbm_bandwidth;
  EXPECT_DOUBLE_EQ(ex.now(), gemms + traffic);
  EXPECT_DOUBLE_EQ(ex.totals().compute, gemms);
  EXPECT_DOUBLE_EQ(ex.totals().local, traffic);
  EXPECT_DOUBLE_EQ(ex.totals().flops, work.flops());

  // A partial all-gather in flight on the column ring: the all-to-all over the columns queues
  // behind it, and the thread waits for both.
  const SimMat x = ex.alloc(256, 256, "x"), y = ex.alloc(256, 1024, "y");
  const double start = ex.now();
  ex.start_all_gather(Axis::col, x, y, MatrixDim::cols);
  ex.blocking_communication("relayout", Axis::col, {CommWork::all_to_all, 3e5});
  const double gather = tpuv4().ici.all_gather(hw::Ring::dim1, 4, 256.0 * 256 * 2).total();
  const double exchange = tpuv4().ici.all_to_all(hw::Ring::dim1, 4, 3e5 * 2).total();
  EXPECT_DOUBLE_EQ(ex.now(), start + gather + exchange);
  // A sum over the rows' ring, free of the column ring's traffic.
  const double before = ex.now();
  ex.blocking_communication("norm_all_reduce", Axis::row, {CommWork::all_reduce, 1000});
  EXPECT_DOUBLE_EQ(ex.now(), before + tpuv4().ici.all_reduce(hw::Ring::dim0, 2, 2000).total());
}

TEST(SimExecutor, APlanRehearsesWithoutTimeAndRunsLikeAnUnplannedCall) {
  const GemmProblem p{Dataflow::LS, 65536, 12288, 12288};
  for (Algorithm algorithm : all_algorithms()) {
    SimExecutor unplanned(tpuv4(), 4, 4);
    auto shard = [&](SimExecutor& ex, char m) {
      const ShardRegion r = shard_region(algorithm, p, m, 4, 4, 0, 0);
      return ex.alloc(r.rows, r.cols, "shard");
    };
    run_gemm(unplanned, algorithm, p, shard(unplanned, 'A'), shard(unplanned, 'B'),
             shard(unplanned, 'C'), {2, 8});
    unplanned.wait_all();
    SimExecutor ex(tpuv4(), 4, 4);
    GemmPlan<SimExecutor> plan(ex, algorithm, p, {2, 8});
    EXPECT_EQ(ex.totals().seconds, 0.0) << algorithm_name(algorithm);
    EXPECT_EQ(ex.totals().collectives, 0) << algorithm_name(algorithm);
    plan.run(shard(ex, 'A'), shard(ex, 'B'), shard(ex, 'C'));
    ex.wait_all();
    EXPECT_DOUBLE_EQ(ex.totals().seconds, unplanned.totals().seconds) << algorithm_name(algorithm);
    EXPECT_EQ(ex.totals().collectives, unplanned.totals().collectives) << algorithm_name(algorithm);
  }
}

// An FC-layer GEMM (tokens x hidden x hidden) large enough that compute dominates on 16 chips.
GemmProblem problem(Dataflow flow) { return GemmProblem{flow, 65536, 12288, 12288}; }

double hidden_fraction(Algorithm algorithm, Dataflow flow, int rows, int cols, int S) {
  std::vector<TraceEvent> events;
  emulate_gemm(tpuv4(), algorithm, problem(flow), rows, cols, GemmOptions{S, 8}, &events);
  return summarize_overlap(events).hidden_fraction();
}

TEST(SimAlgorithms, CollectiveNeverOverlaps) {
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS})
    for (auto [rows, cols] : {std::pair{4, 4}, std::pair{8, 2}, std::pair{2, 16}})
      EXPECT_EQ(hidden_fraction(Algorithm::collective, flow, rows, cols, 1), 0.0)
          << dataflow_name(flow) << " " << rows << "x" << cols;
}

// Sliced, the collectives of one slice run under the GEMM of another: at least a third of the
// communication is hidden, and the time the cores sit idle falls below half of Collective's.
TEST(SimAlgorithms, MeshSliceOverlapsInEveryDataflow) {
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    EXPECT_GT(hidden_fraction(Algorithm::meshslice, flow, 4, 4, 8), 0.33) << dataflow_name(flow);
    const auto ms = emulate_gemm(tpuv4(), Algorithm::meshslice, problem(flow), 4, 4, {8, 8});
    const auto co = emulate_gemm(tpuv4(), Algorithm::collective, problem(flow), 4, 4, {1, 8});
    EXPECT_LT(ms.totals.exposed(), 0.5 * co.totals.exposed()) << dataflow_name(flow);
  }
}

TEST(SimAlgorithms, MeshSliceWithOneSliceIsCollective) {
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    const auto ms = emulate_gemm(tpuv4(), Algorithm::meshslice, problem(flow), 4, 8, {1, 8});
    const auto co = emulate_gemm(tpuv4(), Algorithm::collective, problem(flow), 4, 8, {1, 8});
    EXPECT_DOUBLE_EQ(ms.totals.seconds, co.totals.seconds) << dataflow_name(flow);
  }
}

TEST(SimAlgorithms, EveryAlgorithmRunsDataFreeOnLargeTori) {
  const GemmProblem p{Dataflow::OS, 65536, 12288, 12288};
  for (Algorithm algorithm : all_algorithms()) {
    const auto r = emulate_gemm(tpuv4(), algorithm, p, 16, 16, {2, 8});
    EXPECT_GT(r.totals.seconds, 0) << algorithm_name(algorithm);
    EXPECT_NEAR(r.totals.flops, 2.0 * p.M * p.N * p.K / 256, 1e-6 * r.totals.flops)
        << algorithm_name(algorithm);
  }
  // 4096 chips (64 x 64) in one process.
  const GemmProblem big{Dataflow::OS, 4096 * 1024, 12288, 12288};
  EXPECT_GT(emulate_gemm(tpuv4(), Algorithm::meshslice, big, 64, 64, {4, 8}).totals.seconds, 0);
}

// Wang's decomposed all-gather moves half-blocks both ways round the ring at once: per loop
// step two shifts of half a block, one each way, starting together; an odd block goes whole.
TEST(SimAlgorithms, WangShiftsHalfBlocksBothWaysAndMultipliesThemTogether) {
  const GemmProblem p{Dataflow::OS, 1024, 1024, 1024};  // A's col blocks: 1024 / 8 = 128 wide
  std::vector<TraceEvent> events;
  emulate_gemm(tpuv4(), Algorithm::wang, p, 2, 8, GemmOptions{8, 1}, &events);
  std::vector<const TraceEvent*> shifts;
  for (const TraceEvent& e : events)
    if (e.name == "shift") shifts.push_back(&e);
  ASSERT_EQ(shifts.size(), 2u * 7);               // S - 1 steps, two halves each
  const double half_block = 1024.0 / 2 * 64 * 2;  // M/Pr rows x 64 columns, 2 bytes
  for (std::size_t i = 0; i < shifts.size(); i += 2) {
    EXPECT_DOUBLE_EQ(shifts[i]->bytes, half_block);
    EXPECT_DOUBLE_EQ(shifts[i + 1]->bytes, half_block);
    EXPECT_DOUBLE_EQ(shifts[i]->start, shifts[i + 1]->start) << i;  // both directions at once
  }
  // OS accumulates every window's product into C: the two halves' windows go into one GEMM.
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const TraceEvent& e) { return e.name == "gemm"; }),
            8);
  // Blocks of 129 columns cannot be halved: they travel whole, one shift per step.
  const GemmProblem odd{Dataflow::OS, 1024, 1024, 8 * 129};
  events.clear();
  emulate_gemm(tpuv4(), Algorithm::wang, odd, 2, 8, GemmOptions{8, 1}, &events);
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const TraceEvent& e) { return e.name == "shift"; }),
            7);
}

// Unrolled (S = 4 on a ring of 8): each stream's prologue fetches the piece 4 chips away, half
// way round. Both streams' prologue shifts are in flight together, one each way, instead of
// the second queueing behind the first; the first GEMM starts only once both have landed.
TEST(SimAlgorithms, WangUnrolledProloguesOfBothStreamsRunTogether) {
  const GemmProblem p{Dataflow::OS, 1024, 1024, 1024};
  std::vector<TraceEvent> events;
  emulate_gemm(tpuv4(), Algorithm::wang, p, 2, 8, GemmOptions{4, 1}, &events);
  std::vector<const TraceEvent*> prologue;
  double first_gemm = -1;
  for (const TraceEvent& e : events) {
    if (e.name == "gemm" && first_gemm < 0) first_gemm = e.start;
    if (e.name == "shift" && first_gemm < 0) prologue.push_back(&e);
  }
  // g - 1 = 1 prologue piece per stream, then the first loop step's shifts (issued before the
  // first GEMM, received while it runs).
  ASSERT_EQ(prologue.size(), 4u);
  // (The second half is sliced out after the first shift is issued: it starts a copy later.)
  const double one = prologue[0]->end - prologue[0]->start;
  EXPECT_LT(prologue[1]->start - prologue[0]->start, 0.01 * one);
  EXPECT_LT(prologue[1]->end - prologue[0]->end, 0.01 * one);  // not queued behind the first
  EXPECT_GE(first_gemm, std::max(prologue[0]->end, prologue[1]->end));
}

// On a machine whose rings are used one way (ring_directions 1, e.g. tpuv4-cloud), the two
// halves share the ring's one direction: the second shift starts when the first ends.
TEST(SimAlgorithms, OppositeShiftsShareARingUsedOneWay) {
  hw::Machine one_way = tpuv4().machine;
  one_way.ici.ring_directions = 1;
  const hw::MachineModel machine(one_way);
  std::vector<TraceEvent> events;
  emulate_gemm(machine, Algorithm::wang, GemmProblem{Dataflow::OS, 1024, 1024, 1024}, 2, 8,
               GemmOptions{8, 1}, &events);
  std::vector<const TraceEvent*> shifts;
  for (const TraceEvent& e : events)
    if (e.name == "shift") shifts.push_back(&e);
  ASSERT_EQ(shifts.size(), 2u * 7);
  for (std::size_t i = 0; i < shifts.size(); i += 2)
    EXPECT_GE(shifts[i + 1]->start, shifts[i]->end) << i;
}

// Wang LS (the authors' Wang_LS): B is all-gathered whole on the row ring first, then the col
// ring's reduce-scatter is decomposed: running sums of half a C block per shift, one each way,
// starting together, and no reduce-scatter left; an odd block's sums go whole, one way.
TEST(SimAlgorithms, WangLsCirculatesHalfBlockSumsBothWaysOnTheColRing) {
  const GemmProblem p{Dataflow::LS, 1024, 1024, 1024};  // C's col blocks: 1024 / 8 = 128 wide
  std::vector<TraceEvent> events;
  emulate_gemm(tpuv4(), Algorithm::wang, p, 2, 8, GemmOptions{8, 1}, &events);
  auto named = [&](const char* name) {
    std::vector<const TraceEvent*> out;
    for (const TraceEvent& e : events)
      if (e.name == name) out.push_back(&e);
    return out;
  };
  const auto gathers = named("all_gather"), shifts = named("shift");
  EXPECT_TRUE(named("reduce_scatter").empty());
  EXPECT_TRUE(named("partial_reduce_scatter").empty());
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->lane, TraceLane::row_links);
  EXPECT_DOUBLE_EQ(gathers[0]->bytes, (2 - 1) * 1024.0 / 2 * 1024 / 8 * 2);  // B's N/Pr x K/Pc
  ASSERT_EQ(shifts.size(), 2u * 7);               // S - 1 steps, two halves each
  const double half_block = 1024.0 / 2 * 64 * 2;  // M/Pr rows x 64 columns, 2 bytes
  for (std::size_t i = 0; i < shifts.size(); i += 2) {
    EXPECT_GE(shifts[i]->start, gathers[0]->end) << i;
    for (const TraceEvent* e : {shifts[i], shifts[i + 1]}) {
      EXPECT_EQ(e->lane, TraceLane::col_links) << i;
      EXPECT_DOUBLE_EQ(e->bytes, half_block) << i;
    }
    EXPECT_DOUBLE_EQ(shifts[i]->start, shifts[i + 1]->start) << i;  // both directions at once
  }
  // Blocks of 129 columns cannot be halved: their sums travel whole, one shift per step.
  const GemmProblem odd{Dataflow::LS, 1024, 8 * 129, 1024};
  events.clear();
  emulate_gemm(tpuv4(), Algorithm::wang, odd, 2, 8, GemmOptions{8, 1}, &events);
  EXPECT_EQ(named("shift").size(), 7u);
}

// At S = R (the authors' loop) every window is one block, or half of one, whose matching rows of
// the gathered B (LS) or of the partial product (RS) lie together in a row-major buffer: the
// GEMMs read and write them in place, with no matching-blocks copies. Only RS cuts its own A
// block into the two halves that travel.
TEST(SimAlgorithms, WangAtOneBlockPerStepCopiesNoMatchingBlocks) {
  for (Dataflow flow : {Dataflow::LS, Dataflow::RS}) {
    std::vector<TraceEvent> events;
    emulate_gemm(tpuv4(), Algorithm::wang, GemmProblem{flow, 1024, 1024, 1024}, 2, 8,
                 GemmOptions{8, 1}, &events);
    auto count = [&](const char* name) {
      return std::count_if(events.begin(), events.end(),
                           [&](const TraceEvent& e) { return e.name == name; });
    };
    EXPECT_EQ(count("gemm"), 2 * 8) << dataflow_name(flow);  // one per half-window
    EXPECT_EQ(count("slice"), flow == Dataflow::RS ? 2 : 0) << dataflow_name(flow);
    // LS adds each arriving running sum (S - 1 per stream) and lands its own sums in C.
    EXPECT_EQ(count("unslice"), flow == Dataflow::LS ? 2 * 8 : 0) << dataflow_name(flow);
  }
}

// Wang decomposing the row ring instead: in RS, A is all-gathered whole on the col ring first,
// then the row ring's reduce-scatter travels as half-block running sums both ways; in OS, B's
// row blocks circulate after A's col all-gather has started.
TEST(SimAlgorithms, WangOnTheRowRingDecomposesItsCollective) {
  for (Dataflow flow : {Dataflow::RS, Dataflow::OS}) {
    const GemmProblem p{flow, 1024, 1024, 1024};
    std::vector<TraceEvent> events;
    emulate_gemm(tpuv4(), Algorithm::wang, p, 8, 2, GemmOptions{8, 1, WangRing::row}, &events);
    std::size_t gathers = 0, shifts = 0;
    for (const TraceEvent& e : events) {
      EXPECT_NE(e.name, "partial_reduce_scatter") << dataflow_name(flow);
      if (e.name == "all_gather") {
        ++gathers;
        EXPECT_EQ(e.lane, TraceLane::col_links) << dataflow_name(flow);
      }
      if (e.name == "shift") {
        ++shifts;
        EXPECT_EQ(e.lane, TraceLane::row_links) << dataflow_name(flow);
      }
    }
    EXPECT_EQ(gathers, 1u) << dataflow_name(flow);
    EXPECT_EQ(shifts, 2u * 7) << dataflow_name(flow);  // S - 1 steps, two halves each
  }
  // S must divide the row ring now.
  EXPECT_THROW(emulate_gemm(tpuv4(), Algorithm::wang, problem(Dataflow::RS), 4, 8,
                            GemmOptions{8, 1, WangRing::row}),
               UserError);
}

// At S = 1 nothing is decomposed: Wang is the Collective 2D GEMM, op for op.
TEST(SimAlgorithms, WangWithOneIterationIsCollective) {
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    const auto wang = emulate_gemm(tpuv4(), Algorithm::wang, problem(flow), 4, 8, {1, 8});
    const auto co = emulate_gemm(tpuv4(), Algorithm::collective, problem(flow), 4, 8, {1, 8});
    EXPECT_DOUBLE_EQ(wang.totals.seconds, co.totals.seconds) << dataflow_name(flow);
    EXPECT_DOUBLE_EQ(wang.totals.memory_bytes, co.totals.memory_bytes) << dataflow_name(flow);
  }
}

// Cannon's two streams travel opposite ways, each step shifting every stream's halves of A and
// B together (the second stream's while the first one's GEMM runs).
TEST(SimAlgorithms, CannonShiftsHalfBlocksBothWays) {
  const GemmProblem p{Dataflow::OS, 1024, 1024, 1024};
  std::vector<TraceEvent> events;
  emulate_gemm(tpuv4(), Algorithm::cannon, p, 4, 4, GemmOptions{}, &events);
  std::vector<const TraceEvent*> shifts;
  for (const TraceEvent& e : events)
    if (e.name == "shift") shifts.push_back(&e);
  // The skew (two streams x A and B, unless a chip's displacement is 0) and 3 steps of 4.
  ASSERT_GE(shifts.size(), 3u * 4);
  const double half_block = 256.0 * 128 * 2;  // 256 x 256 blocks halved along K, 2 bytes
  for (const TraceEvent* e : shifts) EXPECT_DOUBLE_EQ(e->bytes, half_block);
  for (std::size_t i = shifts.size() - 3 * 4; i < shifts.size(); i += 2)
    EXPECT_DOUBLE_EQ(shifts[i + 1]->start, shifts[i]->start) << i;
}

TEST(SimAlgorithms, CannonRunsOnlyOnSquareMeshes) {
  EXPECT_NO_THROW(emulate_gemm(tpuv4(), Algorithm::cannon, problem(Dataflow::OS), 4, 4, {1, 8}));
  EXPECT_THROW(emulate_gemm(tpuv4(), Algorithm::cannon, problem(Dataflow::OS), 4, 8, {1, 8}),
               UserError);
}

// On 8 x 8, chip (4, 4) skews its two half-blocks 4 hops each, one each way at once; chip (5, 5)
// skews both 3 hops the same way, one after the other: 6 hop-times against 4, so it is slower.
TEST(SimAlgorithms, CannonIsTimedAtTheChipWithTheSlowestSkew) {
  const auto r = emulate_gemm(tpuv4(), Algorithm::cannon, problem(Dataflow::OS), 8, 8, {1, 8});
  EXPECT_EQ(r.chip_row, 5);
  EXPECT_EQ(r.chip_col, 5);
}

// SUMMA broadcasts P = lcm(Pr, Pc) panels per operand, each pipelined over P + D - 1 stages
// (paper §2.3.3): its synchronization grows about quadratically with the mesh side, MeshSlice's
// (S partial all-gathers of P - 1 steps) linearly. Weak scaling, as in the paper: the shards
// keep their size while the mesh grows.
TEST(SimAlgorithms, SummaSynchronizationGrowsQuadraticallyWithTheMeshSide) {
  auto sync = [](Algorithm algorithm, int side) {
    const std::size_t extent = 1024 * side;
    const GemmProblem p{Dataflow::OS, extent, extent, extent};
    return emulate_gemm(tpuv4(), algorithm, p, side, side, {4, 8}).totals.sync;
  };
  for (int side : {8, 16, 32}) {
    const double summa = sync(Algorithm::summa, 2 * side) / sync(Algorithm::summa, side);
    const double meshslice =
        sync(Algorithm::meshslice, 2 * side) / sync(Algorithm::meshslice, side);
    EXPECT_GT(summa, 3.2) << "side " << side;  // 4 would be exactly quadratic
    EXPECT_LT(summa, 4.5) << "side " << side;
    EXPECT_GT(meshslice, 1.8) << "side " << side;  // (2P - 1) / (P - 1): linear
    EXPECT_LT(meshslice, 2.4) << "side " << side;
  }
}

}  // namespace
}  // namespace meshslice::sim
