#pragma once
// The software pipeline shared by the algorithms that reduce-scatter their result slice by slice
// (MeshSlice LS/RS, sliced 1D TP LS, sliced FSDP RS): the partial reduce-scatter of slice s
// drains while slice s+1 computes. Two partial buffers alternate, so the GEMM of slice s+2 waits
// only for the reduce-scatter of slice s, which read the buffer it is about to overwrite. The
// pipeline waits for its own reduce-scatters only: whatever else the caller has in flight
// (a data-parallel gradient all-reduce) keeps going.
//
//     SliceScatters<Exec> scattered(ex, Axis::col, c, MatrixDim::cols, rows, cols, o, "label");
//     for (int s = 0; s < S; ++s) {
//       ex.gemm(alpha, ..., 0, scattered.partial(s));   // slice s's contribution
//       scattered.start(s, beta);                        // slice s of c = RdS + beta * slice s
//     }
//     scattered.finish();
#include <algorithm>
#include <array>
#include <cstddef>

#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

template <class Exec>
class SliceScatters {
 public:
  using Mat = typename Exec::Mat;

  // Reduce-scatters along `dim` on `axis` rows x cols partial buffers into the o.slices slices
  // (of o.block-blocks) of `shard`.
  SliceScatters(Exec& ex, Axis axis, const Mat& shard, MatrixDim dim, std::size_t rows,
                std::size_t cols, const GemmOptions& o, const char* label)
      : ex_(ex), axis_(axis), shard_(shard), dim_(dim), options_(o) {
    for (int i = 0; i < std::min(o.slices, 2); ++i) buffers_[i] = ex.alloc(rows, cols, label);
  }

  // The buffer slice s's contribution goes to, once the reduce-scatter that last read it is done.
  const Mat& partial(int s) {
    if (s >= 2) ex_.wait(ops_[s % 2]);
    return buffers_[s % 2];
  }

  // Starts reduce-scattering partial(s) into slice s of the shard (slice = sum + beta * slice).
  void start(int s, double beta) {
    ops_[s % 2] = ex_.start_partial_reduce_scatter(axis_, buffers_[s % 2], shard_, dim_,
                                                   {options_.slices, s, options_.block}, beta);
  }

  // Waits for the reduce-scatters still in flight.
  void finish() {
    for (int i = 0; i < std::min(options_.slices, 2); ++i) ex_.wait(ops_[i]);
  }

 private:
  Exec& ex_;
  Axis axis_;
  Mat shard_;
  MatrixDim dim_;
  GemmOptions options_;
  std::array<Mat, 2> buffers_;
  std::array<typename Exec::OpId, 2> ops_{};
};

}  // namespace meshslice
