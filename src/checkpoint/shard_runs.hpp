#pragma once
// Where the elements of a chip's shard lie in the global tensor a checkpoint stores: as runs of
// consecutive elements of the global row-major tensor, each read from the shard with a fixed
// stride (1 where the shard stores the tensor as it is, the shard's row length where it stores
// the transpose). The runs are sorted by their place in the global tensor, so that they make an
// MPI-IO file view (displacements must not decrease) and the staging buffer between shard and
// file is in file order: one buffer, one collective read or write per tensor.
//
// Works for any part of a shard that is a range of its row-major elements: the whole shard, or
// the row of it that ZeRO-1 gives one data-parallel replica. A shard may reach past the global
// tensor (the rows or columns a vocabulary is padded with for the mesh): those elements are in
// no run, neither written nor read.
//
//     const auto runs = shard_runs(p.layout, p.global, rows, cols, 0, rows * cols);
//     stage(runs, host_shard.data(), staging.data());    // shard -> file order
//     unstage(runs, staging.data(), host_shard.data());  // file order -> shard
//     const auto part = runs_within(runs, first, last);  // those in a range of the tensor
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/bfloat16.hpp"
#include "parameters/parameter_layout.hpp"

namespace meshslice {

struct ShardRun {
  std::uint64_t offset = 0;  // of its first element in the global row-major tensor
  std::uint64_t length = 0;  // elements
  std::uint64_t local = 0;   // its first element's index in the part of the shard
  std::uint64_t stride = 1;  // between its consecutive elements in the part of the shard
};

// The runs of elements [first, first + count) of a shard of shard_rows x shard_cols (row-major)
// of the stored matrix `layout` describes, in `global`, sorted by offset; `local` counts from
// `first`.
std::vector<ShardRun> shard_runs(const StoredLayout& layout, const ParamShape& global,
                                 std::size_t shard_rows, std::size_t shard_cols, std::size_t first,
                                 std::size_t count);

// The runs' parts in the global elements [first, last), cut at the edges (a binary search finds
// the first).
std::vector<ShardRun> runs_within(const std::vector<ShardRun>& runs, std::uint64_t first,
                                  std::uint64_t last);

// Calls visit(i, j) for every element of the runs: i its place in the runs' order (the file's),
// j its index in the part of the shard. Runs of a transposed shard (stride > 1) lie side by side
// in the shard, one column each: up to 16 such neighbours go together, their i-th elements at a
// time, so that the shard is touched a whole cache line at a time, and the 16 runs are read as 16
// sequential streams. (Going down each run in turn, tiled, touched lines a power-of-two stride
// apart, which share a few cache sets: 3x slower.)
template <class Visit>
void for_each_element(const std::vector<ShardRun>& runs, Visit&& visit) {
  constexpr std::size_t kColumns = 16;
  std::uint64_t at = 0;
  for (std::size_t r = 0; r < runs.size();) {
    const ShardRun& lead = runs[r];
    std::size_t n = 1;  // neighbours: the same stride and length, the next column each
    while (lead.stride > 1 && n < kColumns && r + n < runs.size() &&
           runs[r + n].stride == lead.stride && runs[r + n].length == lead.length &&
           runs[r + n].local == lead.local + n)
      ++n;
    for (std::uint64_t i = 0; i < lead.length; ++i)
      for (std::size_t k = 0; k < n; ++k)
        visit(at + k * lead.length + i, lead.local + k + i * lead.stride);
    at += n * lead.length;
    r += n;
  }
}

// The part's elements in the runs' order (F: the file's scalar type).
template <class F, class T>
void stage(const std::vector<ShardRun>& runs, const T* part, F* out) {
  for_each_element(runs,
                   [&](std::uint64_t i, std::uint64_t j) { out[i] = element_cast<F>(part[j]); });
}

template <class F, class T>
void unstage(const std::vector<ShardRun>& runs, const F* in, T* part) {
  for_each_element(runs,
                   [&](std::uint64_t i, std::uint64_t j) { part[j] = element_cast<T>(in[i]); });
}

}  // namespace meshslice
