// GEMM plans: a plan allocates nothing when it runs (counted through Kokkos' allocation
// callbacks), C = alpha op(A) op(B) + beta C against the serial reference for beta 0, 1 and 0.5
// and over repeated runs of one plan, for every algorithm x dataflow x collective
// implementation on the mesh this binary runs on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/errors.hpp"
#include "exec/real_executor.hpp"
#include "gemm/run_gemm.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kM = 48, kN = 72, kK = 96;

// Kokkos allocations (any memory space) while counting is on.
std::uint64_t g_allocations = 0;
void count_allocation(const Kokkos::Tools::SpaceHandle, const char*, const void*,
                      const std::uint64_t) {
  ++g_allocations;
}

class AllocationCounter {
 public:
  AllocationCounter() {
    Kokkos::Tools::Experimental::set_allocate_data_callback(&count_allocation);
    g_allocations = 0;
  }
  ~AllocationCounter() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  std::uint64_t take() {
    const std::uint64_t n = g_allocations;
    g_allocations = 0;
    return n;
  }
};

// The slice counts tried: 1, the largest of {4, 3, 2} the algorithm accepts here, and 2 too
// when that is 4 (Wang on a 4-chip ring: an unrolled loop of S = 2 windows of g = 2 blocks,
// with its prologue or epilogue, besides classic Wang's S = 4). Wang decomposes either ring.
std::vector<GemmOptions> options_for(Algorithm algorithm, const GemmProblem& p) {
  std::vector<GemmOptions> out{{1, 1}};
  if (algorithm == Algorithm::collective || algorithm == Algorithm::cannon) return out;
  RealExecutor<double> ex(torus(), CommOptions{});
  const std::vector<WangRing> rings = algorithm == Algorithm::wang
                                          ? std::vector<WangRing>{WangRing::col, WangRing::row}
                                          : std::vector<WangRing>{WangRing::col};
  for (WangRing ring : rings) {
    const std::size_t first = out.size();
    for (int s : {4, 3, 2}) {
      const bool wanted = out.size() == first || (out[first].slices == 4 && s == 2);
      if (!wanted) continue;
      try {
        GemmPlan<RealExecutor<double>> plan(ex, algorithm, p, {s, 2, ring});
        out.push_back({s, 2, ring});
      } catch (const UserError&) {
      }
    }
  }
  return out;
}

bool runs_here(Algorithm algorithm) {
  return algorithm != Algorithm::cannon || torus().size(Axis::row) == torus().size(Axis::col);
}

std::string describe(Algorithm algorithm, const GemmProblem& p, const GemmOptions& o,
                     CollectiveImpl impl) {
  return concat(algorithm_name(algorithm), " ", p.str(), " S=", o.slices, " B=", o.block,
                " ring=", wang_ring_name(o.wang_ring), " impl=", impl_name(impl));
}

TEST(GemmPlan, RunsAllocateNothingAfterPlanCreation) {
  for (Algorithm algorithm : all_algorithms()) {
    if (!runs_here(algorithm)) continue;
    for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
      const GemmProblem p{flow, kM, kN, kK};
      for (const GemmOptions& o : options_for(algorithm, p))
        for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring}) {
          CommOptions comm;
          comm.impl = impl;
          RealExecutor<float> ex(torus(), comm, /*gemm_chunks=*/3);
          ex.set_min_chunk_rows(1);  // the small shards are cut into chunks too
          auto a = make_matrix<float>(my_region(algorithm, p, 'A').rows,
                                      my_region(algorithm, p, 'A').cols,
                                      [](std::size_t i, std::size_t j) { return i + j; });
          auto b = make_matrix<float>(my_region(algorithm, p, 'B').rows,
                                      my_region(algorithm, p, 'B').cols,
                                      [](std::size_t i, std::size_t j) { return i * j; });
          auto c = make_matrix<float>(my_region(algorithm, p, 'C').rows,
                                      my_region(algorithm, p, 'C').cols,
                                      [](std::size_t, std::size_t) { return 0; });
          const std::string what = describe(algorithm, p, o, impl);
          AllocationCounter counter;
          // An unplanned call allocates every buffer again, each time (what every call did
          // before plans): the yardstick, and proof that the counter sees allocations at all.
          run_gemm(ex, algorithm, p, a, b, c, o);
          const std::uint64_t unplanned = counter.take();
          GemmPlan<RealExecutor<float>> plan(ex, algorithm, p, o);
          const std::uint64_t at_creation = counter.take();
          for (int rep = 0; rep < 3; ++rep) plan.run(a, b, c, 1.0, rep == 0 ? 0.0 : 1.0);
          const std::uint64_t per_run = counter.take();
          EXPECT_EQ(per_run, 0u) << what << ": 3 runs of a plan allocated " << per_run;
          EXPECT_EQ(unplanned, at_creation) << what;
          if (torus().size(Axis::row) * torus().size(Axis::col) > 1) {
            EXPECT_GT(unplanned, 0u) << what << ": the allocation counter saw nothing";
          }
          if (torus().rank() == 0)
            std::printf("allocations %-10s %s S=%d %-6s: unplanned call %llu, plan creation %llu, "
                        "3 runs %llu\n",
                        algorithm_name(algorithm), dataflow_name(flow), o.slices, impl_name(impl),
                        static_cast<unsigned long long>(unplanned),
                        static_cast<unsigned long long>(at_creation),
                        static_cast<unsigned long long>(per_run));
        }
    }
  }
}

// A pipeline keeps two slices in flight, so its collectives' scratch is reused slice after
// slice: a plan allocates as much at S = 8 as at S = 2.
TEST(GemmPlan, ScratchDoesNotGrowWithTheSliceCount) {
  const GemmProblem p{Dataflow::OS, kM, kN, kK};
  for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring}) {
    CommOptions comm;
    comm.impl = impl;
    RealExecutor<float> ex(torus(), comm);
    AllocationCounter counter;
    GemmPlan<RealExecutor<float>> two(ex, Algorithm::meshslice, p, {2, 1});
    const std::uint64_t at_two = counter.take();
    GemmPlan<RealExecutor<float>> eight(ex, Algorithm::meshslice, p, {8, 1});
    const std::uint64_t at_eight = counter.take();
    EXPECT_EQ(at_eight, at_two) << impl_name(impl);
  }
}

// C = alpha AB + beta C0, then (same plan, run again with beta = 1) C += alpha AB.
template <class T>
void check_accumulation(Algorithm algorithm, double beta) {
  const double alpha = 1.5;
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    const GemmProblem p{flow, kM, kN, kK};
    const GlobalMatrix a = global_matrix(p.global_a(), 1, 0, 1.0 / 16);
    const GlobalMatrix b = global_matrix(p.global_b(), 2, 0, 1.0 / 16);
    const GlobalMatrix c0 = global_matrix(p.global_c(), 3, 0, 1.0 / 4);
    const GlobalMatrix ab = serial_gemm(p, a, b);
    double scale = 0;
    for (double v : ab.values) scale = std::max(scale, std::abs(v));
    const ShardRegion cr = my_region(algorithm, p, 'C');
    for (const GemmOptions& o : options_for(algorithm, p))
      for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring}) {
        CommOptions comm;
        comm.impl = impl;
        RealExecutor<T> ex(torus(), comm, /*gemm_chunks=*/3);
        ex.set_min_chunk_rows(1);  // the small shards are cut into chunks too
        auto a_shard = shard_of<T>(a, my_region(algorithm, p, 'A'));
        auto b_shard = shard_of<T>(b, my_region(algorithm, p, 'B'));
        // beta = 0 must not read C: a NaN there must not survive.
        const double nan = std::numeric_limits<double>::quiet_NaN();
        auto c_shard = make_matrix<T>(cr.rows, cr.cols, [&](std::size_t i, std::size_t j) {
          return beta == 0 ? nan : c0(cr.row0 + i, cr.col0 + j);
        });
        GemmPlan<RealExecutor<T>> plan(ex, algorithm, p, o);
        const std::string what = concat(describe(algorithm, p, o, impl), " beta=", beta);
        for (int run = 1; run <= 2; ++run) {
          plan.run(a_shard, b_shard, c_shard, alpha, run == 1 ? beta : 1.0);
          auto got = to_host(c_shard);
          double worst = 0;
          for (std::size_t i = 0; i < got.extent(0); ++i)
            for (std::size_t j = 0; j < got.extent(1); ++j) {
              const std::size_t gi = cr.row0 + i, gj = cr.col0 + j;
              const double base = beta == 0 ? 0.0 : beta * c0(gi, gj);
              const double want = base + run * alpha * ab(gi, gj);
              const double err = std::abs(got(i, j) - want) / scale;
              worst =
                  std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(worst, err);
            }
          const double tolerance = std::is_same_v<T, double> ? 1e-12 : 1e-5;
          EXPECT_LE(worst, tolerance) << what << " run " << run;
        }
      }
  }
}

class GemmPlanAlgorithms : public ::testing::TestWithParam<Algorithm> {};

TEST_P(GemmPlanAlgorithms, AccumulatesWithBetaZeroOneAndHalf) {
  if (!runs_here(GetParam())) GTEST_SKIP() << "Cannon needs a square mesh";
  for (double beta : {0.0, 1.0, 0.5}) check_accumulation<double>(GetParam(), beta);
  check_accumulation<float>(GetParam(), 0.5);
}

INSTANTIATE_TEST_SUITE_P(All, GemmPlanAlgorithms, ::testing::ValuesIn(all_algorithms()),
                         [](const auto& info) {
                           return info.param == Algorithm::tp1d
                                      ? std::string("tp1d")
                                      : std::string(algorithm_name(info.param));
                         });

TEST(GemmPlan, BadConfigurationsFailAtPlanCreationAndBadShardsAtRun) {
  RealExecutor<double> ex(torus(), CommOptions{});
  const GemmProblem p{Dataflow::OS, kM, kN, kK};
  using Plan = GemmPlan<RealExecutor<double>>;
  EXPECT_THROW(Plan(ex, Algorithm::meshslice, p, {5, 7}), UserError);
  EXPECT_THROW(Plan(ex, Algorithm::summa, p, {64, 1}), UserError);
  Plan plan(ex, Algorithm::meshslice, p, {1, 1});
  Matrix<double> wrong("wrong", 1, 1);
  EXPECT_THROW(plan.run(wrong, wrong, wrong), UserError);
}

}  // namespace
}  // namespace meshslice::testing
