#include "exec/batched_gemm.hpp"

#include <type_traits>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "exec/cublas_gemm_ex.hpp"

namespace meshslice {
namespace {

#ifdef MESHSLICE_CUBLAS
// One cuBLAS handle for every batch of the process, destroyed with Kokkos (while the CUDA
// context it lives in still is).
CublasGemmEx& batched_cublas() {
  static CublasGemmEx* const gemm = [] {
    auto* made = new CublasGemmEx;
    Kokkos::push_finalize_hook([made] { delete made; });
    return made;
  }();
  return *gemm;
}
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
#ifdef MESHSLICE_CUBLAS
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {  // cuBLAS reads device memory
    // One BLAS call to the device-work counter (core/device_work_counter.cpp).
    const ProfilingRegion region("meshslice::batched_gemm[cublas]");
    constexpr bool single = std::is_same_v<T, float>;
    batched_cublas().run_strided_batched(
        space, transpose_a, transpose_b, static_cast<int>(m), static_cast<int>(n),
        static_cast<int>(k), &alpha, a.first.data(), static_cast<long long>(a.stride),
        b.first.data(), static_cast<long long>(b.stride), &beta, c.first.data(),
        static_cast<long long>(c.stride), static_cast<int>(count), single ? CUDA_R_32F : CUDA_R_64F,
        single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F);
    return;
  }
#endif
  const char* ta = transpose_a ? "T" : "N";
  const char* tb = transpose_b ? "T" : "N";
  for (std::size_t j = 0; j < count; ++j)
    blas_gemm(space, ta, tb, alpha, item(a, j), item(b, j), beta, item(c, j));
}

template void batched_gemm<float>(const ExecSpace&, bool, bool, float, const StridedBatch<float>&,
                                  const StridedBatch<float>&, float, const StridedBatch<float>&,
                                  std::size_t);
template void batched_gemm<double>(const ExecSpace&, bool, bool, double,
                                   const StridedBatch<double>&, const StridedBatch<double>&, double,
                                   const StridedBatch<double>&, std::size_t);

}  // namespace meshslice
