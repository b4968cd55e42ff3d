#pragma once
// cuBLAS's GEMM of any operand type on row-major Kokkos matrices, for the bf16 and tf32 local
// GEMMs (exec/local_gemm_bf16.cpp, exec/local_gemm_tf32.cpp) and attention's strided batches
// (exec/batched_gemm.cpp). Include it only in a CUDA build with KokkosKernels' cuBLAS
// (MESHSLICE_CUBLAS below), from .cpp files: cuBLAS's headers stay out of the rest.
#include <KokkosKernels_config.h>
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
#define MESHSLICE_CUBLAS 1
#include <cublas_v2.h>

#include "core/errors.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

// A cuBLAS handle of its own, for one GEMM object's calls.
class CublasGemmEx {
 public:
  CublasGemmEx() {
    require(cublasCreate(&handle_) == CUBLAS_STATUS_SUCCESS, "could not create a cuBLAS handle");
  }
  ~CublasGemmEx() { cublasDestroy(handle_); }
  CublasGemmEx(const CublasGemmEx&) = delete;
  CublasGemmEx& operator=(const CublasGemmEx&) = delete;

  // Row-major c (m x n, float) = alpha op(a) op(b) + beta c on `space`'s stream, a and b of
  // `type` with leading dimensions lda and ldb (their row lengths as stored), summed as
  // `compute` says. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets
  // b first.
  void run(const ExecSpace& space, bool ta, bool tb, int m, int n, int k, float alpha,
           const void* a, int lda, const void* b, int ldb, cudaDataType type, float beta, float* c,
           cublasComputeType_t compute) {
    cublasSetStream(handle_, space.cuda_stream());
    const cublasStatus_t status =
        cublasGemmEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                     k, &alpha, b, type, ldb, a, type, lda, &beta, c, CUDA_R_32F, n, compute,
                     CUBLAS_GEMM_DEFAULT);
    MESHSLICE_ASSERT(status == CUBLAS_STATUS_SUCCESS, "cublasGemmEx failed: status ",
                     static_cast<int>(status));
  }

  // The same for `count` GEMMs of one shape whose a, b and c lie stride_a, stride_b and stride_c
  // elements apart (a strided batch, exec/batched_gemm.hpp), every matrix of `type` with its
  // rows contiguous; alpha and beta point at values of the scalar `compute` scales by.
  void run_strided_batched(const ExecSpace& space, bool ta, bool tb, int m, int n, int k,
                           const void* alpha, const void* a, long long stride_a, const void* b,
                           long long stride_b, const void* beta, void* c, long long stride_c,
                           int count, cudaDataType type, cublasComputeType_t compute) {
    cublasSetStream(handle_, space.cuda_stream());
    const int lda = ta ? m : k, ldb = tb ? k : n;
    const cublasStatus_t status =
        cublasGemmStridedBatchedEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, alpha, b, type, ldb,
                                   stride_b, a, type, lda, stride_a, beta, c, type, n, stride_c,
                                   count, compute, CUBLAS_GEMM_DEFAULT);
    MESHSLICE_ASSERT(status == CUBLAS_STATUS_SUCCESS, "cublasGemmStridedBatchedEx failed: status ",
                     static_cast<int>(status));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace meshslice
#endif
