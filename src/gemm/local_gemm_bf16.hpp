#pragma once
// The local GEMM of a bf16 run: C (m x n, float) = alpha op(A) op(B) + beta C, A and B in
// bfloat16 (core/bfloat16.hpp), the products summed in float; op(X) is X or X^T as stored
// (row-major, as the distributed GEMMs hand their shards over). Which route is fastest depends on
// the machine, so each is kept and meshslice-bench's local_gemm mode times them side by side
// (inputs/bench/local-gemm.yaml):
//   onednn        oneDNN's matmul (Debian's libdnnl-dev, found at configure time), on a CPU:
//                 AMX or AVX512-BF16 where the CPU has them (474 GFLOP/s on one Emerald Rapids
//                 core, against OpenBLAS's 148 in float)
//   cublas        cuBLAS's cublasGemmEx, bf16 in, float compute: a CUDA build's tensor cores
//   float_panels  A and B widened to float, then the BLAS's sgemm: every backend; what
//                 Debian's OpenBLAS 0.3.21 offers (its build has no sbgemm)
// Scratch (float_panels' panels, a cuBLAS handle) is made when the GEMM is, for operands up to
// its m x n x k, so running it allocates nothing (oneDNN makes a primitive per shape the first
// time it sees it).
//
//     LocalGemmBf16 gemm(Bf16GemmRoute::onednn, m, n, k);
//     gemm.run(space, a, b, 0.0f, c);                          // c = a b
//     gemm.run(space, true, false, 1.0f, a, b, 1.0f, c);       // c += a^T b
#include <cstddef>
#include <memory>

#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

enum class Bf16GemmRoute { onednn, cublas, float_panels };
// Every route, the fastest where it runs first.
constexpr Bf16GemmRoute kBf16GemmRoutes[] = {Bf16GemmRoute::onednn, Bf16GemmRoute::cublas,
                                             Bf16GemmRoute::float_panels};

const char* bf16_route_name(Bf16GemmRoute route);
// Whether this build can run `route` (onednn: built with oneDNN, host memory; cublas: a CUDA
// build with KokkosKernels' cuBLAS).
bool bf16_route_available(Bf16GemmRoute route);

class LocalGemmBf16 {
 public:
  // UserError when this build cannot run `route`.
  LocalGemmBf16(Bf16GemmRoute route, std::size_t m, std::size_t n, std::size_t k);
  ~LocalGemmBf16();
  LocalGemmBf16(const LocalGemmBf16&) = delete;
  LocalGemmBf16& operator=(const LocalGemmBf16&) = delete;

  // c (m x n) = alpha op(a) op(b) + beta c, beta 0 or 1; op(a) m x k, op(b) k x n within the
  // sizes made for. Queued on `space` (cublas, float_panels) or done on return (onednn).
  void run(const ExecSpace& space, bool transpose_a, bool transpose_b, float alpha,
           const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
           const Matrix<float>& c);
  void run(const ExecSpace& space, const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
           const Matrix<float>& c) {
    run(space, false, false, 1.0f, a, b, beta, c);
  }

  Bf16GemmRoute route() const { return route_; }

 private:
  struct OneDnn;  // oneDNN's engine, stream and primitives: its headers stay in the .cpp
  struct CuBlas;  // a cuBLAS handle
  Bf16GemmRoute route_;
  std::size_t m_, n_, k_;
  Matrix<float> a_, b_;  // float_panels: the widened operands (m x k and k x n elements)
  std::unique_ptr<OneDnn> onednn_;
  std::unique_ptr<CuBlas> cublas_;
};

}  // namespace meshslice
