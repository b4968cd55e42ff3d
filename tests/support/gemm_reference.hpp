#pragma once
// Serial reference for the distributed GEMM tests: global operands held whole on every rank
// (in double) and C = op(A) op(B) computed with plain loops, independent of BLAS and of the
// code under test.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "gemm/algorithm.hpp"
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

// The part of global matrix 'A', 'B' or 'C' this rank holds under `algorithm`.
inline ShardRegion my_region(Algorithm algorithm, const GemmProblem& p, char matrix) {
  return shard_region(algorithm, p, matrix, torus().size(Axis::row), torus().size(Axis::col),
                      torus().coord(Axis::row), torus().coord(Axis::col));
}

// This rank's shard of g: the region r of it.
template <class T>
Matrix<T> shard_of(const GlobalMatrix& g, const ShardRegion& r) {
  return make_matrix<T>(r.rows, r.cols,
                        [&](std::size_t i, std::size_t j) { return g(r.row0 + i, r.col0 + j); });
}

// op(a) op(b) of global matrices, in double with plain loops.
inline GlobalMatrix product(const GlobalMatrix& a, bool ta, const GlobalMatrix& b, bool tb) {
  const std::size_t m = ta ? a.shape.cols : a.shape.rows, k = ta ? a.shape.rows : a.shape.cols;
  const std::size_t n = tb ? b.shape.rows : b.shape.cols;
  GlobalMatrix c{{m, n}, std::vector<double>(m * n, 0.0)};
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::size_t l = 0; l < k; ++l)
        sum += (ta ? a(l, i) : a(i, l)) * (tb ? b(j, l) : b(l, j));
      c.values[i * n + j] = sum;
    }
  return c;
}

inline GlobalMatrix transpose(const GlobalMatrix& g) {
  GlobalMatrix t{{g.shape.cols, g.shape.rows}, std::vector<double>(g.values.size())};
  for (std::size_t r = 0; r < g.shape.rows; ++r)
    for (std::size_t c = 0; c < g.shape.cols; ++c) t.values[c * g.shape.rows + r] = g(r, c);
  return t;
}

// This chip's block (i, j) of g on the Pr x Pc mesh (the 2D algorithms' layout).
inline Matrix<double> block(const GlobalMatrix& g) {
  const std::size_t rows = g.shape.rows / torus().size(Axis::row);
  const std::size_t cols = g.shape.cols / torus().size(Axis::col);
  const std::size_t r0 = torus().coord(Axis::row) * rows, c0 = torus().coord(Axis::col) * cols;
  return make_matrix<double>(rows, cols,
                             [&](std::size_t i, std::size_t j) { return g(r0 + i, c0 + j); });
}

// Largest |got - want| / max |want| over this chip's block (i, j).
inline double worst_error(const Matrix<double>& got, const GlobalMatrix& want) {
  const auto host = to_host(got);
  const std::size_t r0 = torus().coord(Axis::row) * got.extent(0);
  const std::size_t c0 = torus().coord(Axis::col) * got.extent(1);
  double scale = 0, worst = 0;
  for (double v : want.values) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < got.extent(0); ++i)
    for (std::size_t j = 0; j < got.extent(1); ++j)
      worst = std::max(worst, std::abs(host(i, j) - want(r0 + i, c0 + j)) / scale);
  return worst;
}

}  // namespace meshslice::testing
