#pragma once
// The three step loops that 1D tensor parallelism (tp1d.hpp) and FSDP (fsdp.hpp) share. Both
// slice the one collective of a 1D algorithm on the tp ring into S blocked sub-shards and
// pipeline it with the GEMMs (MeshSlice's slicing on a single ring); they differ only in which
// operand travels and how the GEMM is transposed, which the callers pass as a lambda.
//
//   gathered_into_c_slices   an operand is all-gathered slice by slice; slice s of C is its
//                            product (1D TP OS, FSDP LS)
//   gathered_into_c_sum      an operand is all-gathered slice by slice and multiplied by the
//                            matching slice of the local operand; C is the sum (1D TP RS, FSDP OS)
//   local_into_c_scatters    slice s of the local operand gives a partial C, reduce-scattered
//                            into slice s of C (1D TP LS, FSDP RS)
// With S = 1 nothing is sliced: the GEMM reads and writes the shards themselves.
#include <cstddef>

#include "gemm/algorithm.hpp"
#include "gemm/slice_gathers.hpp"
#include "gemm/slice_scatters.hpp"

namespace meshslice::sliced_1d {

// Sub-shard s of a local operand along `dim`: the operand itself when S = 1, else copied into a
// slice_rows x slice_cols buffer allocated once (from the plan's workspace).
template <class Exec>
class LocalSlices {
 public:
  using Mat = typename Exec::Mat;
  LocalSlices(Exec& ex, const Mat& local, MatrixDim dim, std::size_t slice_rows,
              std::size_t slice_cols, const GemmOptions& o, const char* label)
      : ex_(ex), local_(local), dim_(dim), options_(o) {
    if (o.slices > 1) slice_ = ex.alloc(slice_rows, slice_cols, label);
  }
  const Mat& get(int s) {
    if (options_.slices == 1) return local_;
    ex_.slice(local_, slice_, dim_, {options_.slices, s, options_.block});
    return slice_;
  }

 private:
  Exec& ex_;
  const Mat& local_;
  MatrixDim dim_;
  GemmOptions options_;
  Mat slice_;
};

// gemm(gathered_s, beta, out) computes out = alpha * (product with gathered_s) + beta * out.
template <class Exec, class Gemm>
void gathered_into_c_slices(Exec& ex, SliceGathers<Exec>& gathered, const typename Exec::Mat& c,
                            MatrixDim c_dim, std::size_t slice_rows, std::size_t slice_cols,
                            const GemmOptions& o, double beta, const char* label, Gemm gemm) {
  const int S = o.slices;
  // Slice s of C is blocked and not contiguous: it is computed into `c_slice` and scattered.
  typename Exec::Mat c_slice;
  if (S > 1) c_slice = ex.alloc(slice_rows, slice_cols, label);
  for (int s = 0; s < S; ++s) {
    gathered.start_next(s);
    const auto& g = gathered.wait(s);
    if (S == 1) {
      gemm(g, beta, c);
    } else {
      gemm(g, 0.0, c_slice);
      ex.unslice(c_slice, c, c_dim, {S, s, o.block}, beta);
    }
  }
}

// gemm(gathered_s, local_s, beta) computes C = alpha * (their product) + beta * C.
template <class Exec, class Gemm>
void gathered_into_c_sum(Exec& ex, SliceGathers<Exec>& gathered, const typename Exec::Mat& local,
                         MatrixDim local_dim, std::size_t slice_rows, std::size_t slice_cols,
                         const GemmOptions& o, double beta, const char* label, Gemm gemm) {
  LocalSlices<Exec> local_slices(ex, local, local_dim, slice_rows, slice_cols, o, label);
  for (int s = 0; s < o.slices; ++s) {
    gathered.start_next(s);
    const auto& local_s = local_slices.get(s);  // while the AG flies
    gemm(gathered.wait(s), local_s, s == 0 ? beta : 1.0);
  }
}

// gemm(local_s, partial) computes partial = alpha * (product with local_s); slice s of C then
// becomes the reduce-scattered partial plus beta times itself.
template <class Exec, class Gemm>
void local_into_c_scatters(Exec& ex, SliceScatters<Exec>& scattered,
                           const typename Exec::Mat& local, MatrixDim local_dim,
                           std::size_t slice_rows, std::size_t slice_cols, const GemmOptions& o,
                           double beta, const char* label, Gemm gemm) {
  LocalSlices<Exec> local_slices(ex, local, local_dim, slice_rows, slice_cols, o, label);
  for (int s = 0; s < o.slices; ++s) {
    gemm(local_slices.get(s), scattered.partial(s));
    scattered.start(s, beta);
  }
  scattered.finish();
}

}  // namespace meshslice::sliced_1d
