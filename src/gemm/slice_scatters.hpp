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
#include <cstddef>

#include "gemm/slice_buffers.hpp"

namespace meshslice {

template <class Exec>
class SliceScatters : SliceBuffers<Exec, typename Exec::Mat> {
  using Base = SliceBuffers<Exec, typename Exec::Mat>;

 public:
  using Mat = typename Exec::Mat;

  // Reduce-scatters along `dim` on `axis` rows x cols partial buffers into the o.slices slices
  // (of o.block-blocks) of `shard`.
  SliceScatters(Exec& ex, Axis axis, const Mat& shard, MatrixDim dim, std::size_t rows,
                std::size_t cols, const GemmOptions& o, const char* label)
      : Base(ex, axis, shard, dim, rows, cols, o, label) {}

  // The buffer slice s's contribution goes to, once the reduce-scatter that last read it is done.
  const Mat& partial(int s) {
    if (s >= 2) this->ex_.wait(this->ops_[s % 2]);
    return this->buffers_[s % 2];
  }

  // Starts reduce-scattering partial(s) into slice s of the shard (slice = sum + beta * slice).
  void start(int s, double beta) {
    this->ops_[s % 2] = this->ex_.start_partial_reduce_scatter(
        this->axis_, this->buffers_[s % 2], this->sliced_, this->dim_, this->spec(s), beta);
  }

  // Waits for the reduce-scatters still in flight.
  void finish() {
    for (int i = 0; i < this->in_flight(); ++i) this->ex_.wait(this->ops_[i]);
  }
};

}  // namespace meshslice
