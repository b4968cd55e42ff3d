#pragma once
// The software pipeline shared by the sliced algorithms (MeshSlice, sliced 1D TP and FSDP):
// the partial all-gather of sub-shard s+1 is in flight while step s computes. Two buffers
// alternate, so the gather filling buffer (s+1) % 2 never touches what step s reads.
//
//     SliceGathers<Exec> gathered(ex, Axis::col, a, MatrixDim::cols, rows, cols, o, "label");
//     for (int s = 0; s < S; ++s) {
//       gathered.start_next(s);            // sub-shard s+1 starts travelling
//       ...work that does not need it...
//       ex.gemm(gathered.wait(s), ...);    // sub-shard s has arrived
//     }
#include <cstddef>

#include "gemm/slice_buffers.hpp"

namespace meshslice {

template <class Exec>
class SliceGathers : SliceBuffers<Exec, typename Exec::Gathered> {
  using Base = SliceBuffers<Exec, typename Exec::Gathered>;

 public:
  using Mat = typename Exec::Mat;
  using Gathered = typename Exec::Gathered;  // a GEMM operand

  // Gathers along `dim` on `axis` the sub-shards of `local` (sliced along `dim` in
  // o.slices pieces of o.block-blocks) into rows x cols buffers; starts sub-shard 0.
  SliceGathers(Exec& ex, Axis axis, const Gathered& local, MatrixDim dim, std::size_t rows,
               std::size_t cols, const GemmOptions& o, const char* label)
      : Base(ex, axis, local, dim, rows, cols, o, label) {
    start(0);
  }

  // Starts sub-shard s+1, if there is one.
  void start_next(int s) {
    if (s + 1 < this->options_.slices) start(s + 1);
  }

  // Waits for sub-shard s and returns its gathered buffer, for the GEMM to read.
  const Gathered& wait(int s) {
    this->ex_.wait(this->ops_[s % 2]);
    return this->buffers_[s % 2];
  }

 private:
  void start(int s) {
    this->ops_[s % 2] = this->ex_.start_partial_all_gather(
        this->axis_, this->sliced_, this->buffers_[s % 2], this->dim_, this->spec(s));
  }
};

}  // namespace meshslice
