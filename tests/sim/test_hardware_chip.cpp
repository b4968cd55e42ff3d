// The chip model against hand computations on TPUv4 numbers (hardware/machines/tpuv4.yaml):
// clock 1.05 GHz, 128x128 MXUs, 4 per core, 2 cores, HBM 1200 GB/s (600 GB/s per core), bf16.
#include <gtest/gtest.h>

#include "hardware/model.hpp"

namespace meshslice::hw {
namespace {

const Machine& tpuv4() {
  static const Machine m = load_machine(machine_path("tpuv4-sim"));
  return m;
}

constexpr double kClock = 1.05e9;
constexpr double kCoreBandwidth = 600e9;

TEST(ChipModel, PeakIsTwoCoresTimesFourMxusOf128x128) {
  EXPECT_NEAR(tpuv4().chip.peak_flops(), 2.0 * 2 * 4 * 128 * 128 * kClock, 1e3);
  EXPECT_NEAR(tpuv4().chip.peak_flops(), 275.25e12, 0.01e12);
}

TEST(ChipModel, OneTileGemmByHand) {
  ChipModel chip(tpuv4().chip);
  // 128^3: one tile, one K chunk, one weight block on one MXU of one core.
  const double prefetch = (128.0 * 128 + 128.0 * 128) * 2 / kCoreBandwidth;  // A and B tiles
  const double multiply = 128 / kClock;  // 128 rows streamed through one block
  const double fill_drain = (128 + 128) / kClock;
  const double write_back = 128.0 * 128 * 2 / kCoreBandwidth;
  const GemmTiming t = chip.gemm(128, 128, 128, false);
  EXPECT_NEAR(t.seconds, prefetch + multiply + fill_drain + write_back, 1e-12);
  EXPECT_EQ(t.tile_m, 128u);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 128 * 128 * 128);
  // Accumulating reads C's old values before the loop.
  EXPECT_NEAR(chip.gemm(128, 128, 128, true).seconds - t.seconds, write_back, 1e-12);
}

TEST(ChipModel, TileLoopOverlapsPrefetchWithMultiplyByHand) {
  ChipModel chip(tpuv4().chip);
  // Tile 256x256, K = 512 in two chunks of 256: 4 weight blocks per chunk on 4 MXUs = one pass
  // of 256 rows per chunk; each chunk's prefetch (256x256 of A and of B) outlasts it.
  const double prefetch = 2.0 * 256 * 256 * 2 / kCoreBandwidth;
  const double multiply = 256 / kClock;
  const double write_back = 256.0 * 256 * 2 / kCoreBandwidth;
  const ChipModel::TileCost t = chip.tile_cost(256, 256, 512, 256, false, kCoreBandwidth);
  EXPECT_NEAR(t.first_prefetch, prefetch, 1e-15);
  EXPECT_NEAR(t.loop, std::max(multiply, prefetch) + multiply, 1e-15);  // chunk 1 arrives under 0
  EXPECT_NEAR(t.fill_drain, 256 / kClock, 1e-15);
  EXPECT_NEAR(t.write_back, write_back, 1e-15);
  EXPECT_NEAR(t.seconds(), prefetch + prefetch + multiply + 256 / kClock + write_back, 1e-15);
  // Accumulating reads C's old values with the first chunk.
  const ChipModel::TileCost a = chip.tile_cost(256, 256, 512, 256, true, kCoreBandwidth);
  EXPECT_NEAR(a.first_prefetch - t.first_prefetch, write_back, 1e-15);
  EXPECT_NEAR(a.seconds() - t.seconds(), write_back, 1e-15);
}

TEST(ChipModel, CoresShareTheTiles) {
  ChipModel chip(tpuv4().chip);
  // 256 x 128 x 128 with 128-row tiles would be two tiles, one per core: as fast as one tile
  // of 128 rows. The planner may pick one 256-row tile instead only if that is faster.
  EXPECT_LE(chip.gemm(256, 128, 128, false).seconds, chip.gemm(128, 128, 128, false).seconds);
}

TEST(ChipModel, PadsKAndNTo128AndMTo8) {
  ChipModel chip(tpuv4().chip);
  EXPECT_DOUBLE_EQ(chip.gemm(512, 129, 512, false).seconds,
                   chip.gemm(512, 256, 512, false).seconds);
  EXPECT_DOUBLE_EQ(chip.gemm(512, 512, 129, false).seconds,
                   chip.gemm(512, 512, 256, false).seconds);
  EXPECT_DOUBLE_EQ(chip.gemm(513, 512, 512, false).seconds,
                   chip.gemm(520, 512, 512, false).seconds);
  EXPECT_LT(chip.gemm(512, 512, 512, false).seconds, chip.gemm(512, 513, 512, false).seconds);
}

TEST(ChipModel, LargeSquareGemmIsComputeBoundNearPeak) {
  ChipModel chip(tpuv4().chip);
  const GemmTiming t = chip.gemm(8192, 8192, 8192, false);
  const double efficiency = t.flops / (t.seconds * tpuv4().chip.peak_flops());
  EXPECT_FALSE(t.hbm_bound);
  EXPECT_GT(efficiency, 0.9);
  EXPECT_LE(efficiency, 1.0);
}

TEST(ChipModel, SkinnyGemmIsBoundByHbm) {
  ChipModel chip(tpuv4().chip);
  // 8 rows against an 8192x8192 weight: every weight byte is read once, 8 rows per block.
  const GemmTiming t = chip.gemm(8, 8192, 8192, false);
  const double weight_read = 8192.0 * 8192 * 2 / 1200e9;
  EXPECT_TRUE(t.hbm_bound);
  EXPECT_GE(t.seconds, weight_read);
  EXPECT_LT(t.seconds, 1.2 * weight_read);
  const double efficiency = t.flops / (t.seconds * tpuv4().chip.peak_flops());
  EXPECT_LT(efficiency, 0.05);
}

TEST(ChipModel, LessHbmBandwidthSlowsHbmBoundGemmsOnly) {
  ChipModel chip(tpuv4().chip);
  const double full = 1200e9, contended = 600e9;
  const double skinny = chip.gemm(8, 8192, 8192, false, full).seconds;
  EXPECT_NEAR(chip.gemm(8, 8192, 8192, false, contended).seconds / skinny, 2.0, 0.1);
  const double big = chip.gemm(8192, 8192, 8192, false, full).seconds;
  EXPECT_LT(chip.gemm(8192, 8192, 8192, false, contended).seconds / big, 1.05);
}

TEST(ChipModel, CopiesStreamThroughHbm) {
  ChipModel chip(tpuv4().chip);
  EXPECT_DOUBLE_EQ(chip.copy_seconds(1.2e9, 1.2e9), 2.4e9 / 1200e9);
}

}  // namespace
}  // namespace meshslice::hw
