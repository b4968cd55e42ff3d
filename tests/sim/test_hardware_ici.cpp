// The ICI model against hand computations with the Google Cloud TPUv4 calibration
// (hardware/machines/tpuv4-cloud.yaml): AG 13 us launch, 5 us sync, 27.5 / 79.8 GB/s; RdS 26 us,
// 5 us, 37.5 / 63.2 GB/s; SendRecv 13 us, 50 us, 38.8 / 35.2 GB/s; rings used one way. The dp
// and pp links take dimension 1's calibration. The simulated torus (tpuv4-sim.yaml: AG 60 GB/s,
// 6 us, 100 us; rings used both ways) checks what the two directions change.
#include <gtest/gtest.h>

#include <cmath>

#include "hardware/model.hpp"

namespace meshslice::hw {
namespace {

const IciModel& ici() {
  static const Machine m = load_machine(machine_path("tpuv4-cloud"));
  static const IciModel model(m.ici);
  return model;
}

constexpr double us = 1e-6;

TEST(IciModel, AllGatherIsLaunchPlusStepsOfSyncAndShard) {
  // P = 8 on dimension 1, 1 MB shards at the ring's rate: 13 + 7 * (5 + 1e6 / 79.8e9 s).
  const CommCost c = ici().all_gather(Ring::dim1, 8, 1e6);
  EXPECT_NEAR(c.total(), 13 * us + 7 * (5 * us + 1e6 / 79.8e9), 1e-12);
  EXPECT_NEAR(c.launch, 13 * us, 1e-15);
  EXPECT_NEAR(c.sync, 35 * us, 1e-15);
  EXPECT_NEAR(c.transfer, 7 * 1e6 / 79.8e9, 1e-15);
  EXPECT_EQ(c.steps, 7);
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 2 * 7 * 1e6);
}

TEST(IciModel, ReduceScatterUsesItsOwnCalibration) {
  const CommCost c = ici().reduce_scatter(Ring::dim0, 4, 2e6);
  EXPECT_NEAR(c.total(), 26 * us + 3 * (5 * us + 2e6 / 37.5e9), 1e-12);
}

// The all-gather and reduce-scatter rates are whole-ring rates: a ring that uses both
// directions does not count them again (the bandwidth was counted twice before issue 11). A
// broadcast splits over the directions: half the buffer each way, over half the hops, each at
// half the ring's rate.
TEST(IciModel, TwoDirectionsSplitABroadcastButNotAnAllGather) {
  Machine m = load_machine(machine_path("tpuv4-sim"));
  ASSERT_EQ(m.ici.ring_directions, 2);
  const IciModel both(m.ici);
  m.ici.ring_directions = 1;
  const IciModel one_way(m.ici);
  EXPECT_NEAR(both.all_gather(Ring::dim1, 8, 1e6).total(), 100 * us + 7 * (6 * us + 1e6 / 60e9),
              1e-12);
  EXPECT_DOUBLE_EQ(both.all_gather(Ring::dim1, 8, 1e6).total(),
                   one_way.all_gather(Ring::dim1, 8, 1e6).total());
  // P = 16, 4 MB: each direction streams 2 MB along ceil(15 / 2) = 8 hops at 30 GB/s.
  const LinkParams direction{100 * us, 6 * us, 30e9};
  const int d = IciModel::pipeline_packets(8, 2e6, direction);
  EXPECT_NEAR(both.broadcast(Ring::dim0, 16, 4e6).total(),
              100 * us + (8 + d) * (6 * us + 2e6 / d / 30e9), 1e-12);
  // One way: P + D - 1 stages (paper §2.3.3) at the whole rate.
  const LinkParams ring = m.ici.link(CommKind::all_gather, Ring::dim0);
  const int d1 = IciModel::pipeline_packets(15, 4e6, ring);
  EXPECT_NEAR(one_way.broadcast(Ring::dim0, 16, 4e6).total(),
              100 * us + (16 + d1 - 1) * (6 * us + 4e6 / d1 / 60e9), 1e-12);
  EXPECT_LT(both.broadcast(Ring::dim0, 16, 4e6).total(),
            one_way.broadcast(Ring::dim0, 16, 4e6).total());
}

TEST(IciModel, ARingOfOneChipCostsNothing) {
  EXPECT_EQ(ici().all_gather(Ring::dim0, 1, 1e9).total(), 0.0);
  EXPECT_EQ(ici().broadcast(Ring::dim1, 1, 1e9).total(), 0.0);
  EXPECT_EQ(ici().shift(Ring::dim1, 1, 1, 1e9).total(), 0.0);
}

TEST(IciModel, ShiftTakesTheShorterWayRound) {
  const double hop = 50 * us + 1e6 / 35.2e9;
  EXPECT_NEAR(ici().shift(Ring::dim1, 8, 1, 1e6).total(), 13 * us + hop, 1e-12);
  EXPECT_NEAR(ici().shift(Ring::dim1, 8, -1, 1e6).total(), 13 * us + hop, 1e-12);
  EXPECT_NEAR(ici().shift(Ring::dim1, 8, 3, 1e6).total(), 13 * us + 3 * hop, 1e-12);
  EXPECT_NEAR(ici().shift(Ring::dim1, 8, 5, 1e6).total(), 13 * us + 3 * hop, 1e-12);
  EXPECT_NEAR(ici().shift(Ring::dim1, 8, 4, 1e6).total(), 13 * us + 4 * hop, 1e-12);
  EXPECT_EQ(ici().shift(Ring::dim1, 8, 8, 1e6).total(), 0.0);
}

TEST(IciModel, AllToAllIsPairwiseExchangeRounds) {
  // P = 4, 3 MB sent in all: rounds d = 1, 2, 3 each shift a 1 MB piece, d = 1 and 3 one hop,
  // d = 2 two hops: 3 launches and 4 hops of 50 us + 1 MB / 35.2 GB/s (the 1D ring takes
  // dimension 1's links).
  const double hop = 50 * us + 1e6 / 35.2e9;
  const CommCost c = ici().all_to_all(Ring::ring1d, 4, 3e6);
  EXPECT_NEAR(c.total(), 3 * 13 * us + 4 * hop, 1e-12);
  EXPECT_EQ(c.steps, 4);
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 2 * 3e6);  // each piece read once and written once
  // Two chips: one neighbour exchange of everything.
  EXPECT_NEAR(ici().all_to_all(Ring::ring1d, 2, 1e6).total(), 13 * us + hop, 1e-12);
  EXPECT_EQ(ici().all_to_all(Ring::ring1d, 1, 1e6).total(), 0.0);
}

TEST(IciModel, BroadcastPipelinesTheOptimalPacketCount) {
  // P = 16, 4 MB on dimension 0, one way: 15 hops; x = 4e6 / 27.5e9 s; D* = sqrt(15 x / 5 us)
  // = 20.9, and D = 21 is the better neighbour.
  const double x = 4e6 / 27.5e9;
  const LinkParams& ag = ici().params().link(CommKind::all_gather, Ring::dim0);
  const int d = IciModel::pipeline_packets(15, 4e6, ag);
  EXPECT_EQ(d, 21);
  const CommCost c = ici().broadcast(Ring::dim0, 16, 4e6);
  EXPECT_NEAR(c.total(), 13 * us + (15 + 21) * (5 * us + x / 21), 1e-12);
  EXPECT_EQ(c.steps, 36);
  // No other packet count is faster.
  for (int D = 1; D <= 400; ++D)
    EXPECT_GE(13 * us + (15 + D) * (5 * us + x / D) + 1e-15, c.total()) << "D=" << D;
}

TEST(IciModel, ReduceUsesTheReduceScatterCalibration) {
  // P = 8, one way: 1 MB streamed along 7 hops.
  const LinkParams& rds = ici().params().link(CommKind::reduce_scatter, Ring::dim1);
  const int d = IciModel::pipeline_packets(7, 1e6, rds);
  EXPECT_NEAR(ici().reduce(Ring::dim1, 8, 1e6).total(),
              26 * us + (7 + d) * (5 * us + 1e6 / d / 63.2e9), 1e-12);
}

TEST(IciModel, OneDimensionalRingBehavesLikeTheConfiguredDimension) {
  EXPECT_DOUBLE_EQ(ici().all_gather(Ring::ring1d, 16, 1e6).total(),
                   ici().all_gather(Ring::dim1, 16, 1e6).total());
}

TEST(IciModel, BroadcastsSynchronizeMoreThanAllGathersOfTheSameData) {
  // The paper's point (§2.3.4): P broadcasts of the P shards vs one all-gather of them.
  const int P = 16;
  const double shard = 1e6;
  const CommCost ag = ici().all_gather(Ring::dim0, P, shard);
  double bcast_sync = 0, bcast_total = 0;
  for (int root = 0; root < P; ++root) {
    const CommCost b = ici().broadcast(Ring::dim0, P, shard);
    bcast_sync += b.sync;
    bcast_total += b.total();
  }
  EXPECT_GT(bcast_sync, 10 * ag.sync);
  EXPECT_GT(bcast_total, ag.total());
}

TEST(IciModel, AllReduceIsAReduceScatterThenAnAllGatherOfItsShards) {
  // P = 8 on the dp ring, an 8 MB buffer: 1 MB shards, 7 reduce-scatter then 7 all-gather steps.
  const CommCost c = ici().all_reduce(Ring::dp, 8, 8e6);
  const CommCost rs = ici().reduce_scatter(Ring::dp, 8, 1e6);
  const CommCost ag = ici().all_gather(Ring::dp, 8, 1e6);
  EXPECT_EQ(c.launch, rs.launch + ag.launch);
  EXPECT_EQ(c.sync, rs.sync + ag.sync);
  EXPECT_EQ(c.transfer, rs.transfer + ag.transfer);
  EXPECT_EQ(c.hbm_bytes, rs.hbm_bytes + ag.hbm_bytes);
  EXPECT_EQ(c.steps, 14);
  // By hand: RdS 26 us + 7 (5 us + 1e6 / 63.2e9), AG 13 us + 7 (5 us + 1e6 / 79.8e9).
  EXPECT_NEAR(c.launch, 39 * us, 1e-15);
  EXPECT_NEAR(c.sync, 70 * us, 1e-15);
  EXPECT_NEAR(c.transfer, 7 * 1e6 / 63.2e9 + 7 * 1e6 / 79.8e9, 1e-15);
  EXPECT_NEAR(c.total(), 39 * us + 70 * us + 7e6 / 63.2e9 + 7e6 / 79.8e9, 1e-12);
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 7 * 3e6 + 7 * 2e6);  // RdS reads 2, writes 1; AG reads 1, writes 1
  // The same on the pp ring and on a mesh dimension, whose links it goes through.
  EXPECT_DOUBLE_EQ(ici().all_reduce(Ring::dim0, 4, 4e6).total(),
                   ici().reduce_scatter(Ring::dim0, 4, 1e6).total() +
                       ici().all_gather(Ring::dim0, 4, 1e6).total());
  EXPECT_NEAR(ici().all_reduce(Ring::pp, 2, 2e6).total(),
              39 * us + 10 * us + 1e6 / 63.2e9 + 1e6 / 79.8e9, 1e-12);
}

TEST(IciModel, AllReduceOnOneChipCostsNothing) {
  for (Ring ring : {Ring::dp, Ring::pp, Ring::dim0}) {
    const CommCost c = ici().all_reduce(ring, 1, 1e9);
    EXPECT_EQ(c.total(), 0.0);
    EXPECT_EQ(c.hbm_bytes, 0.0);
    EXPECT_EQ(c.steps, 0);
  }
}

TEST(IciModel, SendRecvIsOneHopOnThePipelineLink) {
  // 1 MB to the next stage: 13 us launch + 50 us sync + 1e6 / 35.2e9 s, one way.
  const CommCost c = ici().send_recv(Ring::pp, 1e6);
  EXPECT_NEAR(c.launch, 13 * us, 1e-15);
  EXPECT_NEAR(c.sync, 50 * us, 1e-15);
  EXPECT_NEAR(c.transfer, 1e6 / 35.2e9, 1e-15);
  EXPECT_NEAR(c.total(), 63 * us + 28.409090909090909 * us, 1e-12);
  EXPECT_EQ(c.steps, 1);
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 2e6);
  // The same as a shift by one place, and on the dp ring's link (same calibration).
  const CommCost s = ici().shift(Ring::pp, 4, 1, 1e6);
  EXPECT_EQ(c.total(), s.total());
  EXPECT_EQ(c.hbm_bytes, s.hbm_bytes);
  EXPECT_EQ(ici().send_recv(Ring::dp, 1e6).total(), c.total());
  // On a mesh dimension it uses that dimension's send_recv bandwidth (38.8 GB/s on dim 0).
  EXPECT_NEAR(ici().send_recv(Ring::dim0, 1e6).total(), 63 * us + 1e6 / 38.8e9, 1e-12);
}

TEST(IciModel, DpAndPpRingsRunEveryOperationOnTheirOwnLinks) {
  // With the shipped calibration they behave like dimension 1 ...
  EXPECT_NEAR(ici().all_gather(Ring::dp, 8, 1e6).total(), 13 * us + 7 * (5 * us + 1e6 / 79.8e9),
              1e-12);
  EXPECT_NEAR(ici().reduce_scatter(Ring::pp, 4, 2e6).total(), 26 * us + 3 * (5 * us + 2e6 / 63.2e9),
              1e-12);
  EXPECT_EQ(ici().broadcast(Ring::dp, 16, 4e6).total(),
            ici().broadcast(Ring::dim1, 16, 4e6).total());
  EXPECT_EQ(ici().reduce(Ring::pp, 8, 1e6).total(), ici().reduce(Ring::dim1, 8, 1e6).total());
  EXPECT_NEAR(ici().shift(Ring::pp, 8, 3, 1e6).total(), 13 * us + 3 * (50 * us + 1e6 / 35.2e9),
              1e-12);
  // ... but read their own link sets: change them and only they change.
  Machine m = load_machine(machine_path("tpuv4-cloud"));
  m.ici.kinds[static_cast<int>(CommKind::all_gather)][IciParams::dp_links].bandwidth = 10e9;
  m.ici.kinds[static_cast<int>(CommKind::send_recv)][IciParams::pp_links].sync_s = 1 * us;
  const IciModel changed(m.ici);
  EXPECT_NEAR(changed.all_gather(Ring::dp, 8, 1e6).total(), 13 * us + 7 * (5 * us + 1e6 / 10e9),
              1e-12);
  EXPECT_NEAR(changed.send_recv(Ring::pp, 1e6).total(), 14 * us + 1e6 / 35.2e9, 1e-12);
  EXPECT_EQ(changed.all_gather(Ring::pp, 8, 1e6).total(),
            ici().all_gather(Ring::dim1, 8, 1e6).total());
  EXPECT_EQ(changed.all_gather(Ring::dim1, 8, 1e6).total(),
            ici().all_gather(Ring::dim1, 8, 1e6).total());
  EXPECT_EQ(changed.send_recv(Ring::dp, 1e6).total(), ici().send_recv(Ring::dp, 1e6).total());
}

TEST(IciModel, AnInvalidRingIsAnError) {
  EXPECT_THROW(ici().all_gather(static_cast<Ring>(7), 4, 1e6), MachineError);
}

}  // namespace
}  // namespace meshslice::hw
