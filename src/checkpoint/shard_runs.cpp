#include "checkpoint/shard_runs.hpp"

#include <algorithm>

namespace meshslice {
namespace {

// A rectangle of the shard: rows [r0, r1) x columns [c0, c1).
struct Rect {
  std::size_t r0, r1, c0, c1;
};

// The row-major range [first, first + count) of a rows x cols shard as at most three
// rectangles: the rest of a first partial row, whole rows, the start of a last partial row.
std::vector<Rect> rectangles(std::size_t cols, std::size_t first, std::size_t count) {
  std::vector<Rect> out;
  std::size_t at = first;
  const std::size_t end = first + count;
  if (at % cols != 0 && at < end) {
    const std::size_t r = at / cols, c1 = std::min(cols, at % cols + (end - at));
    out.push_back({r, r + 1, at % cols, c1});
    at = r * cols + c1;
  }
  if (end / cols > at / cols && at < end) {
    out.push_back({at / cols, end / cols, 0, cols});
    at = (end / cols) * cols;
  }
  if (at < end) out.push_back({at / cols, at / cols + 1, 0, end - at});
  return out;
}

}  // namespace

std::vector<ShardRun> shard_runs(const StoredLayout& layout, const ParamShape& global,
                                 std::size_t shard_rows, std::size_t shard_cols,
                                 std::size_t first, std::size_t count) {
  std::vector<ShardRun> runs;
  if (count == 0 || shard_rows == 0 || shard_cols == 0) return runs;
  // Along a global row the shard's elements are consecutive in its stored columns, or (stored
  // transposed) in its stored rows: `along` walks that direction, `across` the other. The
  // runs are where the global column steps by one (the QKV permutation breaks them).
  for (const Rect& rect : rectangles(shard_cols, first, count)) {
    const bool t = layout.transposed;
    const std::size_t a0 = t ? rect.r0 : rect.c0, a1 = t ? rect.r1 : rect.c1;
    const std::size_t x0 = t ? rect.c0 : rect.r0, x1 = t ? rect.c1 : rect.r1;
    const std::size_t stride = t ? shard_cols : 1;
    for (std::size_t x = x0; x < x1; ++x) {
      ShardRun run;
      std::size_t last_col = 0;
      for (std::size_t a = a0; a < a1; ++a) {
        const std::size_t r = t ? a : x, c = t ? x : a;
        std::size_t row = 0, col = 0;
        layout.logical(r, c, row, col);
        if (run.length > 0 && col == last_col + 1) {
          ++run.length;
        } else {
          if (run.length > 0) runs.push_back(run);
          run = {row * global.cols + col, 1, r * shard_cols + c - first, stride};
        }
        last_col = col;
      }
      if (run.length > 0) runs.push_back(run);
    }
  }
  std::sort(runs.begin(), runs.end(),
            [](const ShardRun& a, const ShardRun& b) { return a.offset < b.offset; });
  return runs;
}

}  // namespace meshslice
