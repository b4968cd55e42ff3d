// The executor's data- and pipeline-parallel ops on real MPI meshes (dp all-reduce,
// reduce-scatter and all-gather of flat buffers; non-periodic sends between pipeline stages),
// and scoped completion: a GEMM plan waits only for its own ops, so an all-reduce the caller
// started before it stays in flight through it and is progressed by it; a local GEMM's chunks
// follow the program's order, not the network's timing.
#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/device_work_counter.hpp"
#include "core/errors.hpp"
#include "core/trace.hpp"
#include "exec/combined_executor.hpp"
#include "exec/real_executor.hpp"
#include "gemm/gemm_plan.hpp"
#include "gemm_reference.hpp"
#include "hardware/machine.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kLength = 96;  // elements of a flat (1 x n) buffer

// Element i of replica r's contribution.
double contribution(int r, std::size_t i) { return global_value(7, r, 0, i); }

template <class T>
Matrix<T> flat_of(int replica, std::size_t n) {
  return make_matrix<T>(1, n, [&](std::size_t, std::size_t i) { return contribution(replica, i); });
}

class ExecutorOps : public ::testing::TestWithParam<CollectiveImpl> {
 protected:
  CommOptions comm() const {
    CommOptions c;
    c.impl = GetParam();
    return c;
  }
};

TEST_P(ExecutorOps, DataParallelAllReduceReduceScatterAllGatherOfFlatBuffers) {
  const int dp = torus().size(Axis::dp), me = torus().coord(Axis::dp);
  RealExecutor<double> ex(torus(), comm());
  const auto in = flat_of<double>(me, kLength);
  Matrix<double> sum("sum", 1, kLength);
  ex.wait(ex.start_all_reduce(Axis::dp, in, sum));
  Matrix<double> mine("mine", 1, kLength / dp);
  ex.wait(ex.start_reduce_scatter(Axis::dp, in, mine, MatrixDim::cols));
  Matrix<double> gathered("gathered", 1, kLength);
  ex.wait(ex.start_all_gather(Axis::dp, mine, gathered, MatrixDim::cols));
  const auto s = to_host(sum), m = to_host(mine), g = to_host(gathered);
  for (std::size_t i = 0; i < kLength; ++i) {
    double want = 0;
    for (int r = 0; r < dp; ++r) want += contribution(r, i);
    EXPECT_EQ(s(0, i), want) << "all_reduce element " << i;
    EXPECT_EQ(g(0, i), want) << "reduce_scatter + all_gather element " << i;
    const std::size_t block = kLength / dp;
    if (i / block == static_cast<std::size_t>(me)) {
      EXPECT_EQ(m(0, i % block), want) << i;
    }
  }
}

TEST_P(ExecutorOps, PipelineStagesSendForwardAndBackward) {
  const int pp = torus().size(Axis::pp), stage = torus().coord(Axis::pp);
  RealExecutor<float> ex(torus(), comm());
  // Activations forward (stage s -> s+1), gradients backward (s -> s-1), both in flight at once.
  const auto activation = flat_of<float>(100 + stage, kLength);
  const auto gradient = flat_of<float>(200 + stage, kLength / 2);
  Matrix<float> from_prev("from_prev", 1, kLength), from_next("from_next", 1, kLength / 2);
  std::vector<RealExecutor<float>::OpId> ops;
  if (stage > 0) ops.push_back(ex.start_recv(Axis::pp, from_prev, -1));
  if (stage + 1 < pp) ops.push_back(ex.start_recv(Axis::pp, from_next, +1));
  if (stage + 1 < pp) ops.push_back(ex.start_send(Axis::pp, activation, +1));
  if (stage > 0) ops.push_back(ex.start_send(Axis::pp, gradient, -1));
  for (auto op : ops) ex.wait(op);
  const auto prev = to_host(from_prev), next = to_host(from_next);
  for (std::size_t i = 0; stage > 0 && i < kLength; ++i)
    EXPECT_EQ(prev(0, i), static_cast<float>(contribution(100 + stage - 1, i)));
  for (std::size_t i = 0; stage + 1 < pp && i < kLength / 2; ++i)
    EXPECT_EQ(next(0, i), static_cast<float>(contribution(200 + stage + 1, i)));
  // The pipeline axis does not wrap around: the first stage has no previous one.
  if (stage == 0) {
    try {
      ex.start_recv(Axis::pp, from_prev, -1);
      ADD_FAILURE() << "a receive from before the first stage was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("does not wrap around"), std::string::npos) << e.what();
    }
  }
  if (stage == pp - 1) {
    EXPECT_THROW(ex.start_send(Axis::pp, activation, +1), UserError);
  }
}

// Combined mode: a message between pipeline stages carries its sender's emulated time, so the
// receiving chip's clock does not run ahead of the work the data waited for. Each stage waits for
// the previous one's data, works, and sends on: stage s's emulated clock ends after s + 1 times
// the work (a chip that ignored its sender's clock would end after one).
// An error inside a plan's run unwinds through its executor, which must not wait there for
// collectives its peers may never start (they may be waiting for this rank): the error would
// become a hang instead of reaching the app's error path. Replica 1 starts an all-reduce that
// the other replicas start only after a barrier replica 1 reaches only if its executor's
// destructor returned at once; an executor that waits deadlocks here (ctest's timeout).
TEST(ExecutorErrors, UnwindingDoesNotWaitForCollectivesInFlight) {
  const int me = torus().coord(Axis::dp);
  CommOptions native;  // a native collective completes through any MPI call's progress
  native.impl = CollectiveImpl::native;
  const auto in = flat_of<double>(me, kLength);
  Matrix<double> sum("sum", 1, kLength);
  if (me == 1) {
    bool caught = false;
    try {
      RealExecutor<double> ex(torus(), native);
      ex.start_all_reduce(Axis::dp, in, sum);
      throw std::runtime_error("a bug inside a plan's run");
    } catch (const std::runtime_error&) {
      caught = true;
    }
    EXPECT_TRUE(caught);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 1) {  // now the peers start theirs, which completes replica 1's abandoned one
    RealExecutor<double> ex(torus(), native);
    ex.wait(ex.start_all_reduce(Axis::dp, in, sum));
    const auto s = to_host(sum);
    double want = 0;
    for (int r = 0; r < torus().size(Axis::dp); ++r) want += contribution(r, 0);
    EXPECT_EQ(s(0, 0), want);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // replica 1 progresses its abandoned request meanwhile
}

TEST(CombinedPipeline, AReceiveCompletesNoEarlierThanTheSendersEmulatedWork) {
  const int pp = torus().size(Axis::pp), stage = torus().coord(Axis::pp);
  if (pp < 2) GTEST_SKIP() << "no pipeline stages";
  const hw::MachineModel machine(hw::load_machine(hw::machine_path("tpuv4-sim")));
  RealExecutor<double> real(torus(), CommOptions{});
  sim::CombinedExecutor<RealExecutor<double>> ex(real, machine);
  Matrix<double> buffer("buffer", 1, kLength);
  const auto data = ex.wrap(buffer);
  if (stage > 0) ex.wait(ex.start_recv(Axis::pp, data, -1, 3));
  const double before = ex.emulated().now();
  ex.compute("work", LocalWork::streaming(1e10), [] {});
  const double work = ex.emulated().now() - before;
  ASSERT_GT(work, 1e-3);
  if (stage + 1 < pp) ex.wait(ex.start_send(Axis::pp, data, +1, 3));
  EXPECT_GE(ex.emulated().now(), (stage + 1) * work * (1 - 1e-9)) << "stage " << stage;
  EXPECT_LT(ex.emulated().now(), (stage + 1) * work * 1.01) << "stage " << stage;
}

INSTANTIATE_TEST_SUITE_P(Impl, ExecutorOps,
                         ::testing::Values(CollectiveImpl::native, CollectiveImpl::ring),
                         [](const auto& info) { return std::string(impl_name(info.param)); });

// Replica 0 starts a dp all-reduce, then runs a GEMM; replica 1 runs its GEMM and starts its
// side of the all-reduce only when replica 0 says its GEMM has returned. So the all-reduce
// cannot complete inside replica 0's GEMM: a GEMM that waited for every op in flight would never
// return (replica 1 gives up after a while and posts anyway, so the failure is a failed
// expectation, not a hang). Replica 0's GEMM is chunked because the all-reduce is in flight,
// and the trace shows the all-reduce spanning the GEMM's steps.
TEST(ScopedCompletion, CallersAllReduceStaysInFlightThroughTheGemm) {
  if (torus().size(Axis::dp) != 2) GTEST_SKIP() << "needs dp = 2";
  const int replica = torus().coord(Axis::dp);
  const int peer = torus().neighbour_rank(Axis::dp, 1);
  constexpr int kGoTag = 4242;
  Trace trace;
  RealExecutor<double> ex(torus(), CommOptions{}, /*gemm_chunks=*/4, &trace);
  ex.set_min_chunk_rows(1);  // the small shards are cut into chunks too
  const auto in = flat_of<double>(replica, kLength);
  Matrix<double> sum("sum", 1, kLength);

  const GemmProblem p{Dataflow::LS, 256, 256, 128};
  const GlobalMatrix a = global_matrix(p.global_a(), 1, 0, 1.0 / 16);
  const GlobalMatrix b = global_matrix(p.global_b(), 2, 0, 1.0 / 16);
  const GlobalMatrix want = serial_gemm(p, a, b);
  auto region = [&](char m) { return my_region(Algorithm::meshslice, p, m); };
  const auto a_shard = shard_of<double>(a, region('A'));
  const auto b_shard = shard_of<double>(b, region('B'));
  Matrix<double> c_shard("c", region('C').rows, region('C').cols);
  GemmPlan<RealExecutor<double>> plan(ex, Algorithm::meshslice, p, {2, 1});

  RealExecutor<double>::OpId all_reduce{};
  if (replica == 0) {
    all_reduce = ex.start_all_reduce(Axis::dp, in, sum);
    plan.run(a_shard, b_shard, c_shard);
    EXPECT_TRUE(ex.pending(all_reduce)) << "the GEMM waited for the caller's all-reduce";
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, peer, kGoTag, torus().comm());
  } else {
    plan.run(a_shard, b_shard, c_shard);
    // Wait for the go, at most ~20 s, then post regardless (no hang if replica 0 is stuck).
    int arrived = 0;
    const double deadline = MPI_Wtime() + 20.0;
    while (!arrived && MPI_Wtime() < deadline)
      MPI_Iprobe(peer, kGoTag, torus().comm(), &arrived, MPI_STATUS_IGNORE);
    all_reduce = ex.start_all_reduce(Axis::dp, in, sum);
    if (arrived) {
      int go = 0;
      MPI_Recv(&go, 1, MPI_INT, peer, kGoTag, torus().comm(), MPI_STATUS_IGNORE);
    } else {
      ADD_FAILURE() << "replica 0 never reported its GEMM done";
    }
  }
  ex.wait(all_reduce);

  const auto s = to_host(sum);
  for (std::size_t i = 0; i < kLength; ++i)
    EXPECT_EQ(s(0, i), contribution(0, i) + contribution(1, i)) << i;
  const auto c = to_host(c_shard);
  const ShardRegion cr = region('C');
  for (std::size_t i = 0; i < c.extent(0); ++i)
    for (std::size_t j = 0; j < c.extent(1); ++j)
      EXPECT_NEAR(c(i, j), want(cr.row0 + i, cr.col0 + j), 1e-9);

  if (replica == 0) {
    double reduce_start = -1, reduce_end = -1, first_gemm = -1, last_gemm = -1;
    int gemms = 0;
    for (const TraceEvent& e : trace.events()) {
      if (e.name == "all_reduce") reduce_start = e.start, reduce_end = e.end;
      if (e.name == "gemm") {
        if (gemms++ == 0) first_gemm = e.start;
        last_gemm = e.end;
      }
    }
    ASSERT_GE(reduce_start, 0) << "no all_reduce in the trace";
    // MeshSlice's two slices, or on a 1 x 1 mesh the one local GEMM (gemm/gemm_plan.hpp).
    ASSERT_GE(gemms, torus().size(Axis::row) * torus().size(Axis::col) == 1 ? 1 : 2);
    EXPECT_LT(reduce_start, first_gemm);
    EXPECT_GT(reduce_end, last_gemm) << "the all-reduce should span the GEMM in the trace";
    if (torus().rank() == 0) std::printf("%s", trace.text_timeline().c_str());
  }
}

// A local GEMM is chunked (to progress the collectives between its chunks) while a collective
// the program started on a ring of several ranks is not yet waited for, whether or not the
// network has completed it by then. A GEMM split along K (A^T B) adds its chunks' products in
// another order than one call does, so chunking by completion gave a run's results different
// last bits from run to run (bench-lm's losses in the 9th digit).
TEST(ChunkedGemms, FollowTheProgramNotTheNetwork) {
  Axis axis = Axis::dp;
  bool found = false;
  for (const Axis candidate : {Axis::row, Axis::col, Axis::dp})
    if (!found && torus().size(candidate) > 1) axis = candidate, found = true;
  if (!found) GTEST_SKIP() << "no ring of several ranks among the mesh's rows, columns and dp";
  install_device_work_counter();
  constexpr std::size_t kChunks = 4;
  RealExecutor<double> ex(torus(), CommOptions{}, kChunks);
  ex.set_min_chunk_rows(1);  // the small matrices are cut too
  const auto a = make_matrix<double>(16, 8, [](std::size_t i, std::size_t j) {
    return global_value(3, 0, i, j);
  });
  const auto b = make_matrix<double>(16, 8, [](std::size_t i, std::size_t j) {
    return global_value(4, 0, i, j);
  });
  Matrix<double> c("c", 8, 8);
  const auto blas_calls_of_a_gemm = [&] {
    const std::uint64_t before = device_work().blas_calls;
    ex.gemm(1.0, a, /*transpose_a=*/true, b, false, 0.0, c);  // split along K: 16 rows of A
    return device_work().blas_calls - before;
  };
  const auto in = flat_of<double>(0, kLength);
  Matrix<double> sum("sum", 1, kLength);
  const auto op = ex.start_all_reduce(axis, in, sum);
  // Each GEMM progresses the all-reduce until the network has completed it...
  const double deadline = MPI_Wtime() + 20.0;
  while (ex.pending(op) && MPI_Wtime() < deadline) EXPECT_EQ(blas_calls_of_a_gemm(), kChunks);
  ASSERT_FALSE(ex.pending(op)) << "the all-reduce did not complete in 20 s";
  // ...and once it has, it is still not waited for: the GEMM is cut as before.
  EXPECT_EQ(blas_calls_of_a_gemm(), kChunks) << "chunked by whether the all-reduce had completed";
  ex.wait(op);
  EXPECT_EQ(blas_calls_of_a_gemm(), 1u) << "nothing left to progress: one call";
}

}  // namespace
}  // namespace meshslice::testing
