// A shard's runs in the global tensor (checkpoint/shard_runs.hpp) against the element-wise map
// of its layout: every element of the part of the shard lands where StoredLayout::logical puts
// it, exactly once, in increasing global order, for plain, transposed and QKV-permuted shards
// and for parts that start and end inside a row (a ZeRO-1 replica's row of the shard).
#include <gtest/gtest.h>

#include <map>

#include "checkpoint/shard_runs.hpp"

namespace meshslice {
namespace {

void expect_runs_match_layout(const StoredLayout& layout, const ParamShape& global,
                              std::size_t rows, std::size_t cols, std::size_t first,
                              std::size_t count) {
  std::map<std::uint64_t, std::uint64_t> want;  // global offset -> index in the part
  std::vector<bool> inside(count, false);       // not padding past the global tensor
  for (std::size_t i = first; i < first + count; ++i) {
    std::size_t row = 0, col = 0;
    layout.logical(i / cols, i % cols, row, col);
    if (row >= global.rows || col >= global.cols) continue;
    want[row * global.cols + col] = i - first;
    inside[i - first] = true;
  }
  std::map<std::uint64_t, std::uint64_t> got;
  std::uint64_t last = 0;
  bool any = false;
  for (const ShardRun& run : shard_runs(layout, global, rows, cols, first, count)) {
    EXPECT_TRUE(!any || run.offset >= last) << "runs out of order";
    for (std::uint64_t k = 0; k < run.length; ++k)
      EXPECT_TRUE(got.emplace(run.offset + k, run.local + k * run.stride).second);
    last = run.offset + run.length;
    any = true;
  }
  EXPECT_EQ(got, want) << "transposed " << layout.transposed << " qkv " << layout.qkv_hidden
                       << " first " << first << " count " << count;
  // Staging puts the runs' elements one after another (however it orders its copying), and
  // staging there and back is the identity (the padding untouched).
  std::vector<double> part(count), back(count, -1.0), in_run_order;
  for (std::size_t i = 0; i < count; ++i) part[i] = static_cast<double>(i);
  const auto runs = shard_runs(layout, global, rows, cols, first, count);
  for (const ShardRun& run : runs)
    for (std::uint64_t k = 0; k < run.length; ++k)
      in_run_order.push_back(part[run.local + k * run.stride]);
  std::vector<double> staged(in_run_order.size());
  stage(runs, part.data(), staged.data());
  EXPECT_EQ(staged, in_run_order);
  unstage(runs, staged.data(), back.data());
  for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(back[i], inside[i] ? part[i] : -1.0) << i;
}

TEST(ShardRuns, EveryElementLandsWhereItsLayoutSays) {
  const std::size_t hidden = 12;
  for (const bool transposed : {false, true})
    for (const bool qkv : {false, true})
      for (std::size_t j = 0; j < 2; ++j) {  // mesh column j of 2, mesh row 1 of 2
        const ParamShape global{hidden, qkv ? 3 * hidden : 2 * hidden};
        const std::size_t stored_rows = transposed ? global.cols : global.rows;
        const std::size_t stored_cols = transposed ? global.rows : global.cols;
        StoredLayout layout;
        layout.transposed = transposed;
        layout.mesh_cols = 2;
        layout.qkv_hidden = qkv ? hidden : 0;
        const std::size_t rows = stored_rows / 2, cols = stored_cols / 2;
        layout.row0 = rows;
        layout.col0 = j * cols;
        const std::size_t n = rows * cols;
        expect_runs_match_layout(layout, global, rows, cols, 0, n);
        for (const std::size_t dp : {2, 3, 5, 7})  // ZeRO-1 rows, inside and across rows
          if (n % dp == 0)
            for (std::size_t r = 0; r < dp; ++r)
              expect_runs_match_layout(layout, global, rows, cols, r * n / dp, n / dp);
        expect_runs_match_layout(layout, global, rows, cols, 5, cols + 3);
        expect_runs_match_layout(layout, global, rows, cols, 1, 2);
      }
}

// A language model's vocabulary padded for the mesh (37 ids in 48 rows or columns): the shards
// of the last mesh row or column reach past the tensor, and only its real elements have runs.
TEST(ShardRuns, PaddingPastTheTensorIsLeftOut) {
  for (const bool transposed : {false, true})
    for (const bool vocab_rows : {true, false}) {  // the embedding (V x H) or the head (H x V)
      const ParamShape global = vocab_rows ? ParamShape{37, 12} : ParamShape{12, 37};
      const ParamShape padded = vocab_rows ? ParamShape{48, 12} : ParamShape{12, 48};
      const std::size_t stored_rows = transposed ? padded.cols : padded.rows;
      const std::size_t stored_cols = transposed ? padded.rows : padded.cols;
      StoredLayout layout;
      layout.transposed = transposed;
      const std::size_t rows = stored_rows / 2, cols = stored_cols / 2;
      for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 2; ++j) {
          layout.row0 = i * rows;
          layout.col0 = j * cols;
          expect_runs_match_layout(layout, global, rows, cols, 0, rows * cols);
          expect_runs_match_layout(layout, global, rows, cols, 5, cols + 3);
        }
    }
}

TEST(ShardRuns, LargeTransposedShardsStageInTiles) {
  // More neighbouring columns than one batch (16) and longer than a tile (64): the tiled copy's
  // edges, with a part that starts and ends inside a stored row.
  for (const bool transposed : {false, true}) {
    StoredLayout layout;
    layout.transposed = transposed;
    const ParamShape global{150, 70};
    const std::size_t rows = transposed ? 70 : 150, cols = transposed ? 150 : 70;
    expect_runs_match_layout(layout, global, rows, cols, 0, rows * cols);
    expect_runs_match_layout(layout, global, rows, cols, 37, rows * cols - 100);
  }
}

}  // namespace
}  // namespace meshslice
