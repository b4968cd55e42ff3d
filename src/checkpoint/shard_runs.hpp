#pragma once
// Where the elements of a chip's shard lie in the global tensor a checkpoint stores: as runs of
// consecutive elements of the global row-major tensor, each read from the shard with a fixed
// stride (1 where the shard stores the tensor as it is, the shard's row length where it stores
// the transpose). The runs are sorted by their place in the global tensor, so that they make an
// MPI-IO file view (displacements must not decrease) and the staging buffer between shard and
// file is in file order: one buffer, one collective read or write per tensor.
//
// Works for any part of a shard that is a range of its row-major elements: the whole shard, or
// the row of it that ZeRO-1 gives one data-parallel replica.
//
//     const auto runs = shard_runs(p.layout, p.global, rows, cols, 0, rows * cols);
//     stage(runs, host_shard.data(), staging.data());    // shard -> file order
//     unstage(runs, staging.data(), host_shard.data());  // file order -> shard
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_config.hpp"
#include "model/parameter_layout.hpp"

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
                                 std::size_t shard_rows, std::size_t shard_cols,
                                 std::size_t first, std::size_t count);

// The part's elements in the runs' order (F: the file's scalar type).
template <class F, class T>
void stage(const std::vector<ShardRun>& runs, const T* part, F* out) {
  for (const ShardRun& run : runs)
    for (std::uint64_t i = 0; i < run.length; ++i)
      *out++ = static_cast<F>(part[run.local + i * run.stride]);
}

template <class F, class T>
void unstage(const std::vector<ShardRun>& runs, const F* in, T* part) {
  for (const ShardRun& run : runs)
    for (std::uint64_t i = 0; i < run.length; ++i)
      part[run.local + i * run.stride] = static_cast<T>(*in++);
}

}  // namespace meshslice
