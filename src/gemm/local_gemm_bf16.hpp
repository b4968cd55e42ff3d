#pragma once
// The local GEMM of a bf16 run: C (m x n, float) = A (m x k) B (k x n) + beta C, A and B in
// bfloat16 (core/bfloat16.hpp), the products summed in float. Which route is fastest depends on
// the machine, so each is kept and meshslice-bench's local_gemm mode times them side by side
// (inputs/bench/local-gemm.yaml):
//   onednn        oneDNN's matmul (Debian's libdnnl-dev, found at configure time), on a CPU:
//                 AMX or AVX512-BF16 where the CPU has them (474 GFLOP/s on one Emerald Rapids
//                 core, against OpenBLAS's 148 in float)
//   float_panels  A and B widened to float, then the BLAS's sgemm: every backend; what
//                 Debian's OpenBLAS 0.3.21 offers (its build has no sbgemm)
// Row-major operands as they are stored (no transposes yet). Scratch (float_panels' panels,
// oneDNN's primitives) is made when the GEMM is, for products up to its m x n x k, so running
// it allocates nothing.
//
//     LocalGemmBf16 gemm(Bf16GemmRoute::onednn, m, n, k);
//     gemm.run(space, a, b, 0.0f, c);   // c = a b
//     gemm.run(space, a, b, 1.0f, c);   // c += a b
#include <cstddef>
#include <memory>

#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

enum class Bf16GemmRoute { onednn, float_panels };

const char* bf16_route_name(Bf16GemmRoute route);
// Whether this build and memory space can run `route` (onednn: built with oneDNN, host memory).
bool bf16_route_available(Bf16GemmRoute route);

class LocalGemmBf16 {
 public:
  // UserError when this build cannot run `route`.
  LocalGemmBf16(Bf16GemmRoute route, std::size_t m, std::size_t n, std::size_t k);
  ~LocalGemmBf16();
  LocalGemmBf16(const LocalGemmBf16&) = delete;
  LocalGemmBf16& operator=(const LocalGemmBf16&) = delete;

  // beta 0 (c = a b) or 1 (c += a b); a m x k, b k x n, c m x n within the sizes made for.
  void run(const ExecSpace& space, const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
           const Matrix<float>& c);

  Bf16GemmRoute route() const { return route_; }

 private:
  struct OneDnn;  // oneDNN's engine, stream and primitives: its headers stay in the .cpp
  Bf16GemmRoute route_;
  std::size_t m_, n_, k_;
  Matrix<float> a_, b_;  // float_panels: the widened operands
  std::unique_ptr<OneDnn> onednn_;
};

}  // namespace meshslice
