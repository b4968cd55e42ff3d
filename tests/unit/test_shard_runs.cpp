// A shard's runs in the global tensor (checkpoint/shard_runs.hpp) against the element-wise map
// of its layout: every element of the part of the shard lands where StoredLayout::logical puts
// it, exactly once, in increasing global order, for plain, transposed and grouped (QKV, SwiGLU) shards
// and for parts that start and end inside a row (a ZeRO-1 replica's row of the shard).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

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
  EXPECT_EQ(got, want) << "transposed " << layout.transposed << " groups " << layout.outputs.blocks
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

// Output columns in logical order; QKV's [q | k | v] in 2 groups; grouped-query QKV (k and v a
// third of q's width); SwiGLU's [gate | up] in 2 groups.
std::vector<GroupedColumns> output_groupings(std::size_t hidden) {
  return {GroupedColumns{}, GroupedColumns{2, {hidden, hidden, hidden}},
          GroupedColumns{2, {hidden, hidden / 3, hidden / 3}},
          GroupedColumns{2, {hidden, hidden, 0}}};
}

// The grouping puts the parts of the same features in each group: QKV's former formula (stored
// column s of group s / 3w is part (s mod 3w) / w's column j w + (s mod w), w = H / Pc).
TEST(GroupedColumns, QkvGroupsHoldTheSameHeadsOfQKAndV) {
  const std::size_t hidden = 12, pc = 3, w = hidden / pc;
  const GroupedColumns qkv{pc, {hidden, hidden, hidden}};
  std::set<std::size_t> seen;
  for (std::size_t s = 0; s < 3 * hidden; ++s) {
    const std::size_t block = s / (3 * w), within = s % (3 * w);
    EXPECT_EQ(qkv.logical(s), (within / w) * hidden + block * w + within % w) << s;
    seen.insert(qkv.logical(s));
  }
  EXPECT_EQ(seen.size(), 3 * hidden);          // a permutation
  const GroupedColumns gate_up{2, {6, 6, 0}};  // F = 6 over 2: [g0 g1 g2 u0 u1 u2 | g3 ...]
  const std::size_t want[] = {0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11};
  for (std::size_t s = 0; s < 12; ++s) EXPECT_EQ(gate_up.logical(s), want[s]) << s;
  const GroupedColumns grouped_query{2, {8, 4, 4}};  // [q0-3 k0-1 v0-1 | q4-7 k2-3 v2-3]
  const std::size_t gq[] = {0, 1, 2, 3, 8, 9, 12, 13, 4, 5, 6, 7, 10, 11, 14, 15};
  for (std::size_t s = 0; s < 16; ++s) EXPECT_EQ(grouped_query.logical(s), gq[s]) << s;
  EXPECT_EQ(GroupedColumns{}.logical(7), 7u);
}

TEST(ShardRuns, EveryElementLandsWhereItsLayoutSays) {
  const std::size_t hidden = 12;
  for (const bool transposed : {false, true})
    for (const GroupedColumns& outputs : output_groupings(hidden))
      for (std::size_t j = 0; j < 2; ++j) {  // mesh column j of 2, mesh row 1 of 2
        const std::size_t out =
            outputs.blocks ? outputs.parts[0] + outputs.parts[1] + outputs.parts[2] : 2 * hidden;
        const ParamShape global{hidden, out};
        const std::size_t stored_rows = transposed ? global.cols : global.rows;
        const std::size_t stored_cols = transposed ? global.rows : global.cols;
        StoredLayout layout;
        layout.transposed = transposed;
        layout.outputs = outputs;
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
