// Data-parallel gradient averaging overlapped with the backward pass: two FC layers, each dp
// replica on its own micro-batch; the last layer's weight gradient starts its dp all-reduce
// before the first layer's backward GEMMs run, and the averages match a serial computation of
// every replica's gradients. A second step allocates nothing.
#include <gtest/gtest.h>

#include <cstdint>

#include "exec/real_executor.hpp"
#include "gemm_reference.hpp"
#include "model/fc_layer.hpp"
#include "model/gradient_sync.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kT = 48, kH = 72, kF = 96;  // tokens, hidden, feed-forward width

std::uint64_t g_allocations = 0;
void count_allocation(const Kokkos::Tools::SpaceHandle, const char*, const void*,
                      const std::uint64_t) {
  ++g_allocations;
}

class GradientSyncTest : public ::testing::TestWithParam<CollectiveImpl> {};

TEST_P(GradientSyncTest, AveragesOverReplicasWhileTheBackwardPassRuns) {
  const int dp = torus().size(Axis::dp), replica = torus().coord(Axis::dp);
  CommOptions comm;
  comm.impl = GetParam();
  RealExecutor<double> ex(torus(), comm, /*gemm_chunks=*/4);
  ex.set_min_chunk_rows(1);  // the small shards are cut into chunks too
  const std::array<GemmChoice, 3> choice{GemmChoice{Algorithm::meshslice, {2, 1}},
                                         GemmChoice{Algorithm::meshslice, {2, 1}},
                                         GemmChoice{Algorithm::meshslice, {2, 1}}};
  // Layer 1: H -> F, layer 2: F -> H, both Y-stationary.
  FcLayer<RealExecutor<double>> first(ex, Stationary::Y, false, kT, kH, kF, choice);
  FcLayer<RealExecutor<double>> second(ex, Stationary::Y, false, kT, kF, kH, choice);
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  GradientSync<RealExecutor<double>> sync(ex, std::vector<MatrixShape>{{kF / rows, kH / cols},
                                                                       {kH / rows, kF / cols}});

  const GlobalMatrix w1 = global_matrix({kH, kF}, 1, 0, 1.0 / 16);
  const GlobalMatrix w2 = global_matrix({kF, kH}, 2, 0, 1.0 / 16);
  auto x1_of = [](int r) { return global_matrix({kT, kH}, 3, r, 1.0 / 16); };
  auto x2_of = [](int r) { return global_matrix({kT, kF}, 4, r, 1.0 / 16); };
  auto dy1_of = [](int r) { return global_matrix({kT, kF}, 5, r, 1.0 / 16); };
  auto dy2_of = [](int r) { return global_matrix({kT, kH}, 6, r, 1.0 / 16); };
  const auto w1_shard = block(w1), w2_shard = block(w2);
  const auto x1 = block(x1_of(replica)), x2 = block(x2_of(replica));
  const auto dy1 = block(dy1_of(replica)), dy2 = block(dy2_of(replica));
  Matrix<double> dx2("dx2", kT / rows, kF / cols), dx1("dx1", kT / rows, kH / cols);
  Matrix<double> dw1("dw1", kH / rows, kF / cols), dw2("dw2", kF / rows, kH / cols);

  auto backward = [&] {
    sync.begin_step();
    second.backward_weight(x2, dy2, dw2, false);
    sync.start(0, dw2);  // in flight through the GEMMs below
    second.backward_data(dy2, w2_shard, dx2);
    first.backward_weight(x1, dy1, dw1, false);
    sync.start(1, dw1);
    first.backward_data(dy1, w1_shard, dx1);
    sync.finish();
  };
  backward();
  // The average over replicas of X^T Y' per layer.
  GlobalMatrix want1{{kH, kF}, std::vector<double>(kH * kF, 0.0)};
  GlobalMatrix want2{{kF, kH}, std::vector<double>(kF * kH, 0.0)};
  for (int r = 0; r < dp; ++r) {
    const GlobalMatrix g1 = product(x1_of(r), true, dy1_of(r), false);
    const GlobalMatrix g2 = product(x2_of(r), true, dy2_of(r), false);
    for (std::size_t i = 0; i < want1.values.size(); ++i) want1.values[i] += g1.values[i] / dp;
    for (std::size_t i = 0; i < want2.values.size(); ++i) want2.values[i] += g2.values[i] / dp;
  }
  EXPECT_LE(worst_error(dw1, want1), 1e-12);
  EXPECT_LE(worst_error(dw2, want2), 1e-12);
  EXPECT_LE(worst_error(dx1, product(dy1_of(replica), false, w1, true)), 1e-12);

  // A second step (same data) allocates nothing and gives the same averages.
  Kokkos::Tools::Experimental::set_allocate_data_callback(&count_allocation);
  g_allocations = 0;
  backward();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  EXPECT_EQ(g_allocations, 0u);
  EXPECT_LE(worst_error(dw1, want1), 1e-12);
  EXPECT_LE(worst_error(dw2, want2), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Impl, GradientSyncTest,
                         ::testing::Values(CollectiveImpl::native, CollectiveImpl::ring),
                         [](const auto& info) { return std::string(impl_name(info.param)); });

// ZeRO-1: a gradient viewed as dp rows is reduce-scattered into this replica's row, averaged;
// gather() puts every replica's row of a parameter back together. The second round allocates
// nothing.
TEST(GradientSyncScatter, ShardsThenGathersEveryReplicasRow) {
  const std::size_t dp = torus().size(Axis::dp), replica = torus().coord(Axis::dp), n = 12;
  RealExecutor<double> ex(torus(), CommOptions{});
  GradientSync<RealExecutor<double>> sync(
      ex, std::vector<DpReduction>{{{dp, n}, true}, {{3, 4}, false}, {{dp, n}, true}});
  const auto value = [](std::size_t r, std::size_t row, std::size_t c) {
    return global_value(r, row, c, 7);
  };
  Matrix<double> g("g", dp, n), h("h", 3, 4), shard("shard", 1, n), parameter("p", dp, n);
  Matrix<double> g2("g2", dp, n), shard2("shard2", 1, n), parameter2("p2", dp, n);
  const Matrix<double> mine = make_matrix<double>(dp, n, [&](std::size_t i, std::size_t c) {
    return value(replica, i, c);
  });
  auto round = [&] {
    Kokkos::deep_copy(g, mine);
    Kokkos::deep_copy(g2, mine);
    Kokkos::deep_copy(h, 1.0);
    sync.begin_step();
    sync.start(0, g, shard);
    sync.start(1, h);
    sync.start(2, g2, shard2);
    sync.finish();
    sync.begin_gather();
    sync.gather(0, shard, parameter);
    sync.gather(2, shard2, parameter2);
    sync.finish_gather();
  };
  round();
  const auto host = to_host(parameter), host2 = to_host(parameter2), host_h = to_host(h);
  for (std::size_t row = 0; row < dp; ++row)
    for (std::size_t c = 0; c < n; ++c) {
      double mean = 0;
      for (std::size_t r = 0; r < dp; ++r) mean += value(r, row, c) / dp;
      EXPECT_DOUBLE_EQ(host(row, c), mean) << row << "," << c;
      EXPECT_DOUBLE_EQ(host2(row, c), mean) << row << "," << c;
    }
  EXPECT_DOUBLE_EQ(host_h(2, 3), 1.0);  // all-reduced and averaged
  Kokkos::Tools::Experimental::set_allocate_data_callback(&count_allocation);
  g_allocations = 0;
  round();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  EXPECT_EQ(g_allocations, 0u);
  EXPECT_THROW(sync.gather(1, shard, parameter), InternalError);  // not a scattered gradient
}

TEST(GradientSyncErrors, OutOfOrderOrMisshapenGradientsAreErrors) {
  RealExecutor<double> ex(torus(), CommOptions{});
  GradientSync<RealExecutor<double>> sync(ex, std::vector<MatrixShape>{{4, 6}, {2, 3}});
  Matrix<double> a("a", 4, 6), b("b", 2, 3);
  sync.begin_step();
  EXPECT_THROW(sync.start(1, b), InternalError);  // out of order
  EXPECT_THROW(sync.start(0, b), InternalError);  // wrong shape
  EXPECT_THROW(sync.finish(), InternalError);     // nothing started yet
  sync.start(0, a);
  sync.start(1, b);
  sync.finish();
}

}  // namespace
}  // namespace meshslice::testing
