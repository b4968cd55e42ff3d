#pragma once
// train.precision tf32: a float GEMM on NVIDIA's tensor cores in TF32 (cuBLAS's
// CUBLAS_COMPUTE_32F_FAST_TF32: the operands cut to TF32's 10-bit mantissa, the products summed
// in float), as PyTorch's torch.backends.cuda.matmul.allow_tf32 = True. Storage, collectives and
// everything else stay float. Only a CUDA build with KokkosKernels' cuBLAS has it; elsewhere
// tf32_gemm_available() is false and making one is a UserError.
//
//     LocalGemmTf32 gemm;
//     gemm.run(space, false, false, 1.0f, a, b, 0.0f, c);  // c = a b, queued on `space`
#include <memory>

#include "core/kokkos_types.hpp"

namespace meshslice {

bool tf32_gemm_available();

class LocalGemmTf32 {
 public:
  LocalGemmTf32();  // UserError where tf32_gemm_available() is false
  ~LocalGemmTf32();
  LocalGemmTf32(const LocalGemmTf32&) = delete;
  LocalGemmTf32& operator=(const LocalGemmTf32&) = delete;

  // c (m x n) = alpha op(a) op(b) + beta c, queued on `space`; one BLAS call to the device-work
  // counter (the region meshslice::tf32_gemm[cublas]).
  void run(const ExecSpace& space, bool transpose_a, bool transpose_b, float alpha,
           const Matrix<float>& a, const Matrix<float>& b, float beta, const Matrix<float>& c);

 private:
  struct CuBlas;  // the cuBLAS handle: its headers stay in the .cpp
  std::unique_ptr<CuBlas> cublas_;
};

}  // namespace meshslice
