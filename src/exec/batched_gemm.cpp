#include "exec/batched_gemm.hpp"

#include <type_traits>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "exec/cublas_gemm_ex.hpp"

namespace meshslice {
namespace {

#ifdef MESHSLICE_CUBLAS
// cuBLAS in device memory only: a CUDA build whose default space is CUDA.
constexpr bool kBatchesOnCublas = std::is_same_v<ExecSpace, Kokkos::Cuda>;

// One handle for every batched call of the process, destroyed with Kokkos (before the CUDA
// context it lives in).
cublasHandle_t batched_handle() {
  static const cublasHandle_t handle = [] {
    cublasHandle_t made = nullptr;
    require(cublasCreate(&made) == CUBLAS_STATUS_SUCCESS, "could not create a cuBLAS handle");
    Kokkos::push_finalize_hook([made] { cublasDestroy(made); });
    return made;
  }();
  return handle;
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first.
template <class T>
void cublas_strided_batched(const ExecSpace& space, bool ta, bool tb, int m, int n, int k, T alpha,
                            const StridedBatch<T>& a, const StridedBatch<T>& b, T beta,
                            const StridedBatch<T>& c, int count) {
  const cublasHandle_t handle = batched_handle();
  cublasSetStream(handle, space.cuda_stream());
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                          op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = static_cast<int>(a.first.extent(1)), ldb = static_cast<int>(b.first.extent(1)),
            ldc = static_cast<int>(c.first.extent(1));
  const auto sa = static_cast<long long>(a.stride), sb = static_cast<long long>(b.stride),
             sc = static_cast<long long>(c.stride);
  cublasStatus_t status;
  if constexpr (std::is_same_v<T, float>)
    status =
        cublasSgemmStridedBatched(handle, op_b, op_a, n, m, k, &alpha, b.first.data(), ldb, sb,
                                  a.first.data(), lda, sa, &beta, c.first.data(), ldc, sc, count);
  else
    status =
        cublasDgemmStridedBatched(handle, op_b, op_a, n, m, k, &alpha, b.first.data(), ldb, sb,
                                  a.first.data(), lda, sa, &beta, c.first.data(), ldc, sc, count);
  MESHSLICE_ASSERT(status == CUBLAS_STATUS_SUCCESS, "cublas<t>gemmStridedBatched failed: status ",
                   static_cast<int>(status));
}
#else
constexpr bool kBatchesOnCublas = false;
#endif

template <class T>
Matrix<T> item(const StridedBatch<T>& batch, std::size_t j) {
  return Matrix<T>(batch.first.data() + j * batch.stride, batch.first.extent(0),
                   batch.first.extent(1));
}

}  // namespace

template <class T>
void batched_gemm(const ExecSpace& space, bool transpose_a, bool transpose_b, T alpha,
                  const StridedBatch<T>& a, const StridedBatch<T>& b, T beta,
                  const StridedBatch<T>& c, std::size_t count) {
  const std::size_t m = c.first.extent(0), n = c.first.extent(1);
  const std::size_t k = transpose_a ? a.first.extent(0) : a.first.extent(1);
  MESHSLICE_ASSERT((transpose_a ? a.first.extent(1) : a.first.extent(0)) == m &&
                       (transpose_b ? b.first.extent(1) : b.first.extent(0)) == k &&
                       (transpose_b ? b.first.extent(0) : b.first.extent(1)) == n,
                   "batched_gemm: the operands' shapes do not fit c's");
  if (count == 0) return;
  if constexpr (kBatchesOnCublas) {
    // One BLAS call to the device-work counter (core/device_work_counter.cpp).
    const ProfilingRegion region("meshslice::batched_gemm[cublas]");
#ifdef MESHSLICE_CUBLAS
    cublas_strided_batched(space, transpose_a, transpose_b, static_cast<int>(m),
                           static_cast<int>(n), static_cast<int>(k), alpha, a, b, beta, c,
                           static_cast<int>(count));
#endif
  } else {
    const char* ta = transpose_a ? "T" : "N";
    const char* tb = transpose_b ? "T" : "N";
    for (std::size_t j = 0; j < count; ++j)
      blas_gemm(space, ta, tb, alpha, item(a, j), item(b, j), beta, item(c, j));
  }
}

template void batched_gemm<float>(const ExecSpace&, bool, bool, float, const StridedBatch<float>&,
                                  const StridedBatch<float>&, float, const StridedBatch<float>&,
                                  std::size_t);
template void batched_gemm<double>(const ExecSpace&, bool, bool, double,
                                   const StridedBatch<double>&, const StridedBatch<double>&, double,
                                   const StridedBatch<double>&, std::size_t);

}  // namespace meshslice
