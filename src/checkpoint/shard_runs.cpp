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
                                 std::size_t shard_rows, std::size_t shard_cols, std::size_t first,
                                 std::size_t count) {
  std::vector<ShardRun> runs;
  if (count == 0 || shard_rows == 0 || shard_cols == 0) return runs;
  // Along a global row the shard's elements are consecutive in its stored columns, or (stored
  // transposed) in its stored rows: `along` walks that direction, `across` the other. A run ends
  // where the global column does not step by one (the QKV permutation), which depends on `along`
  // alone: the pattern of a rectangle's first line holds for all of its lines.
  for (const Rect& rect : rectangles(shard_cols, first, count)) {
    const bool t = layout.transposed;
    const std::size_t a0 = t ? rect.r0 : rect.c0, a1 = t ? rect.r1 : rect.c1;
    const std::size_t x0 = t ? rect.c0 : rect.r0, x1 = t ? rect.c1 : rect.r1;
    const std::size_t stride = t ? shard_cols : 1;
    const auto logical = [&](std::size_t x, std::size_t a, std::size_t& row, std::size_t& col) {
      layout.logical(t ? a : x, t ? x : a, row, col);
    };
    struct Segment {
      std::size_t a, length, col;
    };
    std::vector<Segment> pattern;
    for (std::size_t a = a0; a < a1; ++a) {
      std::size_t row = 0, col = 0;
      logical(x0, a, row, col);
      if (!pattern.empty() && col == pattern.back().col + pattern.back().length)
        ++pattern.back().length;
      else
        pattern.push_back({a, 1, col});
    }
    for (std::size_t x = x0; x < x1; ++x) {
      std::size_t row = 0, col = 0;
      logical(x, a0, row, col);
      if (row >= global.rows) continue;  // padding (a vocabulary padded for the mesh)
      for (const Segment& s : pattern) {
        if (s.col >= global.cols) continue;
        const std::size_t r = t ? s.a : x, c = t ? x : s.a;
        runs.push_back({row * global.cols + s.col, std::min(s.length, global.cols - s.col),
                        r * shard_cols + c - first, stride});
      }
    }
  }
  std::sort(runs.begin(), runs.end(),
            [](const ShardRun& a, const ShardRun& b) { return a.offset < b.offset; });
  return runs;
}

std::vector<ShardRun> runs_within(const std::vector<ShardRun>& runs, std::uint64_t first,
                                  std::uint64_t last) {
  std::vector<ShardRun> out;
  auto run = std::partition_point(runs.begin(), runs.end(), [&](const ShardRun& r) {
    return r.offset + r.length <= first;  // sorted and disjoint: these end before the range
  });
  for (; run != runs.end() && run->offset < last; ++run) {
    const std::uint64_t begin = std::max(run->offset, first);
    const std::uint64_t end = std::min(run->offset + run->length, last);
    out.push_back(
        {begin, end - begin, run->local + (begin - run->offset) * run->stride, run->stride});
  }
  return out;
}

}  // namespace meshslice
