#pragma once
// The local GEMM of a bf16 run: C (m x n, float) = alpha op(A) op(B) + beta C, A and B in
// bfloat16 (core/bfloat16.hpp), the products summed in float; op(X) is X or X^T as stored
// (row-major, as the distributed GEMMs hand their shards over). Which route is fastest depends on
// the machine, so each is kept and meshslice-bench's local_gemm mode times them side by side
// (inputs/bench/local-gemm.yaml):
//   onednn        oneDNN's matmul (Debian's libdnnl-dev, found at configure time), on a CPU:
//                 AMX or AVX512-BF16 where the CPU has them (474 GFLOP/s on one Emerald Rapids
//                 core, against OpenBLAS's 148 in float); none where oneDNN has no bf16 matmul
//                 for the CPU (Debian's 2.6 with AVX2 only), asked of oneDNN at the first use
//   cublas        cuBLAS's cublasGemmEx, bf16 in, float compute: a CUDA build's tensor cores
//   float_panels  A and B widened to float, then the BLAS's sgemm: every backend; what
//                 Debian's OpenBLAS 0.3.21 offers (its build has no sbgemm)
// Scratch (float_panels' panels, a cuBLAS handle) is made when the GEMM is, for operands of up
// to its element counts, so running it allocates nothing (oneDNN makes a primitive per shape the
// first time it sees it). The executors' GEMMs run it in a bf16 run (exec/real_executor.hpp).
//
//     LocalGemmBf16 gemm(Bf16GemmRoute::onednn, m * k, k * n);
//     gemm.run(space, a, b, 0.0f, c);                          // c = a b
//     gemm.run(space, true, false, 1.0f, a, b, 1.0f, c);       // c += a^T b
#include <cstddef>
#include <memory>
#include <string>

#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

enum class Bf16GemmRoute { onednn, cublas, float_panels };
// Every route, the fastest where it runs first.
constexpr Bf16GemmRoute kBf16GemmRoutes[] = {Bf16GemmRoute::onednn, Bf16GemmRoute::cublas,
                                             Bf16GemmRoute::float_panels};

const char* bf16_route_name(Bf16GemmRoute route);
// The first route of kBf16GemmRoutes this build runs (float_panels at the latest).
Bf16GemmRoute fastest_bf16_route();
// Whether `route` runs in this build on this machine (bf16_route_needs says what it needs).
bool bf16_route_available(Bf16GemmRoute route);
// What `route` needs, for messages: onednn a build with oneDNN, host memory and a CPU oneDNN
// has a bf16 matmul for; cublas a CUDA build with KokkosKernels' cuBLAS.
const char* bf16_route_needs(Bf16GemmRoute route);

class LocalGemmBf16 {
 public:
  // For operands a and b of up to a_elements and b_elements; UserError, naming what `route`
  // needs, where it does not run.
  LocalGemmBf16(Bf16GemmRoute route, std::size_t a_elements, std::size_t b_elements);
  ~LocalGemmBf16();
  LocalGemmBf16(const LocalGemmBf16&) = delete;
  LocalGemmBf16& operator=(const LocalGemmBf16&) = delete;

  // c (m x n) = alpha op(a) op(b) + beta c; op(a) m x k, op(b) k x n, each within the
  // elements made for. Queued on `space` (cublas, float_panels) or done on return (onednn).
  void run(const ExecSpace& space, bool transpose_a, bool transpose_b, float alpha,
           const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
           const Matrix<float>& c);
  void run(const ExecSpace& space, const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
           const Matrix<float>& c) {
    run(space, false, false, 1.0f, a, b, beta, c);
  }

  Bf16GemmRoute route() const { return route_; }
  // Whether operands of these sizes are within what it was made for.
  bool fits(std::size_t a_elements, std::size_t b_elements) const {
    return a_elements <= a_elements_ && b_elements <= b_elements_;
  }
  std::size_t a_elements() const { return a_elements_; }
  std::size_t b_elements() const { return b_elements_; }
  // Bytes of its own buffers (float_panels' widened operands; oneDNN's scratchpads excluded).
  std::size_t buffer_bytes() const { return (a_.extent(0) + b_.extent(0)) * sizeof(float); }

 private:
  struct OneDnn;  // oneDNN's engine, stream and primitives: its headers stay in the .cpp
  struct CuBlas;  // a cuBLAS handle
  Bf16GemmRoute route_;
  std::string region_name_;  // "meshslice::bf16_gemm[onednn]": a BLAS call to the counters
  std::size_t a_elements_, b_elements_;
  Kokkos::View<float*, MemSpace> a_, b_;  // float_panels: the widened operands
  std::unique_ptr<OneDnn> onednn_;
  std::unique_ptr<CuBlas> cublas_;
};

}  // namespace meshslice
