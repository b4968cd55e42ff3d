#pragma once
// RMSNorm of standard-layout activations split over the mesh (tokens over mesh rows, hidden over
// mesh columns), h = x g / rms(x) by token: each chip sums its shard's squares by token, one
// small all-reduce over the mesh row's columns completes them, then each chip scales its shard.
// The backward pass sums the tokens' dot products over the columns and the gain's gradient over
// the rows the same way. Its kernels and sums go through the executor with what they cost; its
// per-token statistics and partial sums are work buffers allocated once, for every norm of the
// model.
//
//     RmsNorm<Exec> norm(ex, hidden, /*trainable=*/true);
//     norm.forward(x, gain, rinv, h);                          // rinv: 1 / rms by token, kept
//     norm.backward(dh, x, gain, rinv, dx, dgain, accumulate);  // dx += the input's gradient
#include <algorithm>
#include <cstddef>

#include "block/block_work.hpp"
#include "comm/small_all_reduce.hpp"
#include "core/kokkos_types.hpp"
#include "exec/caller_work.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/rmsnorm.hpp"
#include "model/model_buffer.hpp"

namespace meshslice {

template <class Exec>
class RmsNorm {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  // A norm over `hidden` features of T x hidden activations (T: the model's tokens).
  RmsNorm(Exec& ex, std::size_t tokens, std::size_t hidden, bool trainable)
      : ex_(ex),
        space_(ex.compute_space()),
        hidden_(hidden),
        small_(std::max(tokens / ex.mesh_rows(), hidden / ex.mesh_cols())) {
    const std::size_t rows = tokens / ex.mesh_rows(), cols = hidden / ex.mesh_cols();
    ss_ = alloc(rows, 1, "rms_sums");
    if (!trainable) return;
    dot_ = alloc(rows, 1, "rms_dots");
    gain_tiles_ = alloc(gain_tiles(rows), cols, "rms_gain_tiles");
    g_gain_ = alloc(1, cols, "grad_gain");
  }

  // h = the norm of x (its elements T, or bf16 where a GEMM takes it so).
  template <class H>
  void forward(const Mat& x, const Mat& gain, const Mat& rinv, const Matrix<H>& h) {
    const double n = static_cast<double>(elements(x));
    ex_.compute("rmsnorm", kernel_work::rmsnorm_sums(n), [&] { row_sum_squares(space_, x, ss_); });
    sum(Axis::col, ss_);  // over the hidden dimension
    ex_.compute("rmsnorm", kernel_work::rmsnorm_apply(n),
                [&] { rmsnorm_apply(space_, x, ss_, gain, hidden_, rinv, h); });
  }

  // dx += the norm's input gradient for dh; the gain's gradient into dgain, overwritten or with
  // `accumulate` added to.
  void backward(const Mat& dh, const Mat& x, const Mat& gain, const Mat& rinv, const Mat& dx,
                const Mat& dgain, bool accumulate) {
    const double n = static_cast<double>(elements(x));
    // Accumulating, this micro-batch's gain gradient is made aside and added.
    const Mat& dg = accumulate ? g_gain_ : dgain;
    ex_.compute("rmsnorm_backward", kernel_work::rmsnorm_backward_partials(n), [&] {
      rmsnorm_backward_partials(space_, dh, x, gain, rinv, dot_, dg, gain_tiles_);
    });
    sum(Axis::col, dot_);  // over the hidden dimension
    sum(Axis::row, dg);    // over the tokens
    ex_.compute("rmsnorm_backward",
                kernel_work::rmsnorm_backward_apply(n, accumulate ? double(elements(dg)) : 0), [&] {
                  rmsnorm_backward_apply(space_, dh, x, gain, rinv, dot_, hidden_, dx);
                  if (accumulate) add_into(space_, dgain, dg);
                });
  }

  std::size_t work_bytes() const { return work_bytes_; }

 private:
  Mat alloc(std::size_t rows, std::size_t cols, const char* label) {
    return counted_matrix<Exec>(label, rows, cols, work_bytes_);
  }
  // x = its sum over the ring of `axis` (blocking).
  void sum(Axis axis, const Mat& x) {
    ex_.communicate("norm_all_reduce", axis,
                    {CommWork::all_reduce, static_cast<double>(elements(x))},
                    [&] { small_.sum(space_, ex_.torus().axis(axis), x); });
  }

  Exec& ex_;
  ExecSpace space_;
  std::size_t hidden_;
  SmallAllReduce<T> small_;
  std::size_t work_bytes_ = 0;
  Mat ss_, dot_, gain_tiles_, g_gain_;
};

}  // namespace meshslice
