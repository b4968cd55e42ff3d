#include "exec/local_gemm_tf32.hpp"

#include <type_traits>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "exec/cublas_gemm_ex.hpp"

namespace meshslice {

bool tf32_gemm_available() {
#ifdef MESHSLICE_CUBLAS
  return std::is_same_v<ExecSpace, Kokkos::Cuda>;  // device memory for cuBLAS
#else
  return false;
#endif
}

#ifdef MESHSLICE_CUBLAS
struct LocalGemmTf32::CuBlas {
  CublasGemmEx gemm;
};
#else
struct LocalGemmTf32::CuBlas {};
#endif

LocalGemmTf32::LocalGemmTf32() {
  require(tf32_gemm_available(),
          "TF32 GEMMs run on NVIDIA tensor cores through cuBLAS: this build has no CUDA backend "
          "with KokkosKernels' cuBLAS (use train.precision float, or bf16)");
  cublas_ = std::make_unique<CuBlas>();
}

LocalGemmTf32::~LocalGemmTf32() = default;

void LocalGemmTf32::run(const ExecSpace& space, bool transpose_a, bool transpose_b, float alpha,
                        const Matrix<float>& a, const Matrix<float>& b, float beta,
                        const Matrix<float>& c) {
  const std::size_t k = transpose_a ? a.extent(0) : a.extent(1);
  MESHSLICE_ASSERT((transpose_b ? b.extent(1) : b.extent(0)) == k &&
                       c.extent(0) == (transpose_a ? a.extent(1) : a.extent(0)) &&
                       c.extent(1) == (transpose_b ? b.extent(0) : b.extent(1)),
                   "LocalGemmTf32: the operands' shapes do not fit c's");
  // One BLAS call to the device-work counter (core/device_work_counter.hpp).
  const ProfilingRegion region("meshslice::tf32_gemm[cublas]");
#ifdef MESHSLICE_CUBLAS
  cublas_->gemm.run(space, transpose_a, transpose_b, static_cast<int>(c.extent(0)),
                    static_cast<int>(c.extent(1)), static_cast<int>(k), alpha, a.data(),
                    static_cast<int>(a.extent(1)), b.data(), static_cast<int>(b.extent(1)),
                    CUDA_R_32F, beta, c.data(), CUBLAS_COMPUTE_32F_FAST_TF32);
#else
  (void)space, (void)alpha, (void)beta;
#endif
}

}  // namespace meshslice
