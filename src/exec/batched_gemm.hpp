#pragma once
// `count` GEMMs of one shape whose operands lie a fixed number of elements apart (a strided
// batch): C_j = alpha op(A_j) op(B_j) + beta C_j, X_j being the matrix of X_0's shape at
// X_0.data() + j * stride. The BLAS blocks of attention (model/kernels/attention.hpp) multiply
// every (sequence, head) pair's row block this way:
//   - on CUDA, one cuBLAS call (cublas<t>gemmStridedBatched) for all pairs: one launch where a
//     call per pair made about 3,000 a step of bench-h1024 on a GPU (docs/gpu.md);
//   - elsewhere, one BLAS call per item, as before: a CPU core multiplies one item at a time
//     anyway, and the device-work counter counts each.
//
//     batched_gemm(space, false, true, scale, {q0, len * dim}, {k0, len * dim}, 0.0f,
//                  {p0, pair_elements}, pairs);
#include <cstddef>

#include "core/kokkos_types.hpp"

namespace meshslice {

template <class T>
struct StridedBatch {
  Matrix<T> first;     // item 0, its rows contiguous (a row-major matrix of its own)
  std::size_t stride;  // elements from one item's first element to the next's
};

// T: float or double.
template <class T>
void batched_gemm(const ExecSpace& space, bool transpose_a, bool transpose_b, T alpha,
                  const StridedBatch<T>& a, const StridedBatch<T>& b, T beta,
                  const StridedBatch<T>& c, std::size_t count);

}  // namespace meshslice
