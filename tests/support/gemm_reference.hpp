#pragma once
// Serial reference for the distributed GEMM tests: global operands held whole on every rank
// (in double) and C = op(A) op(B) computed with plain loops, independent of BLAS and of the
// code under test.
#include <cstddef>
#include <vector>

#include "gemm/gemm_problem.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {

struct GlobalMatrix {
  MatrixShape shape;
  std::vector<double> values;  // row-major
  double operator()(std::size_t r, std::size_t c) const { return values[r * shape.cols + c]; }
};

// Entry (r, c) = global_value(salt, salt2, r, c) * scale: small exact values, distinct per salt.
inline GlobalMatrix global_matrix(MatrixShape shape, std::uint64_t salt, std::uint64_t salt2 = 0,
                                  double scale = 1.0) {
  GlobalMatrix g{shape, std::vector<double>(shape.rows * shape.cols)};
  for (std::size_t r = 0; r < shape.rows; ++r)
    for (std::size_t c = 0; c < shape.cols; ++c)
      g.values[r * shape.cols + c] = global_value(salt, salt2, r, c) * scale;
  return g;
}

inline GlobalMatrix serial_gemm(const GemmProblem& p, const GlobalMatrix& a,
                                const GlobalMatrix& b) {
  GlobalMatrix c{p.global_c(), std::vector<double>(p.M * p.N, 0.0)};
  for (std::size_t m = 0; m < p.M; ++m)
    for (std::size_t n = 0; n < p.N; ++n) {
      double sum = 0.0;
      for (std::size_t k = 0; k < p.K; ++k) {
        const double av = p.flow == Dataflow::RS ? a(k, m) : a(m, k);
        const double bv = p.flow == Dataflow::LS ? b(n, k) : b(k, n);
        sum += av * bv;
      }
      c.values[m * p.N + n] = sum;
    }
  return c;
}

}  // namespace meshslice::testing
