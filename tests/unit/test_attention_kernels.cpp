// The attention kernels against each other on one chip's shard, in double: the fused kernels
// (model/kernels/fused_attention.hpp) in both backward shapes (a team per pair, a team per
// tile) against the BLAS-block kernels (model/kernels/attention.hpp), with and without RoPE,
// for sequences of one partial tile, of several tiles with a partial last one, and head
// dimensions narrower than a micro-tile. The transformer tests check both against the serial
// reference model end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "core/kokkos_types.hpp"
#include "model/counter_random.hpp"
#include "model/kernels/attention.hpp"

namespace meshslice {
namespace {

Matrix<double> random_matrix(const char* label, std::size_t rows, std::size_t cols,
                             std::uint64_t stream) {
  Matrix<double> m(std::string(label), rows, cols);
  auto host = Kokkos::create_mirror_view(m);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) host(i, j) = counter_normal(7, stream, i, j);
  Kokkos::deep_copy(m, host);
  return m;
}

struct Result {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> a, dqkv;
};

// Forward and backward through `attention` on the same qkv and output gradient.
Result run(LocalAttention<double>& attention, const AttentionShape& s, const Matrix<double>& qkv,
           const Matrix<double>& da) {
  const std::size_t tokens = s.seqs * s.len, width = s.heads * s.dim;
  Matrix<double> a("a", tokens, width), dqkv("dqkv", tokens, 3 * width);
  Buffer<double> saved("saved", s.saved_elements());
  attention.forward(ExecSpace(), qkv, saved, a);
  attention.backward(ExecSpace(), qkv, a, da, saved, dqkv);
  Kokkos::fence();
  Result r{Kokkos::create_mirror_view(a), Kokkos::create_mirror_view(dqkv)};
  Kokkos::deep_copy(r.a, a);
  Kokkos::deep_copy(r.dqkv, dqkv);
  return r;
}

template <class V>
double max_relative_difference(const V& x, const V& y) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < x.extent(0); ++i)
    for (std::size_t j = 0; j < x.extent(1); ++j) {
      worst = std::max(worst, std::abs(x(i, j) - y(i, j)));
      scale = std::max(scale, std::abs(y(i, j)));
    }
  return worst / scale;
}

TEST(AttentionKernels, FusedInBothShapesMatchesTheBlasBlocks) {
  for (std::size_t len : {12, 72, 130})
    for (std::size_t dim : {4, 16, 36, 128})
      for (bool rope : {false, true}) {
        AttentionShape s{2, len, 3, dim, rope, AttentionKernel::blas_blocks};
        const std::string where =
            "len " + std::to_string(len) + ", dim " + std::to_string(dim) + (rope ? ", RoPE" : "");
        const Matrix<double> qkv = random_matrix("qkv", s.seqs * len, 3 * s.heads * dim, 1);
        const Matrix<double> da = random_matrix("da", s.seqs * len, s.heads * dim, 2);
        LocalAttention<double> blas(s, true);
        const Result expected = run(blas, s, qkv, da);
        s.kernel = AttentionKernel::fused;
        for (int pair_teams : {0, 1}) {
          LocalAttention<double> fused(s, true, pair_teams);
          const Result got = run(fused, s, qkv, da);
          const std::string shape = pair_teams ? "a team per pair" : "a team per tile";
          EXPECT_LT(max_relative_difference(got.a, expected.a), 1e-12) << where << ", " << shape;
          EXPECT_LT(max_relative_difference(got.dqkv, expected.dqkv), 1e-12)
              << where << ", " << shape;
        }
      }
}

TEST(AttentionKernels, TheFusedKernelKeepsOneLogSumExpPerRow) {
  AttentionShape s{2, 72, 3, 16, true, AttentionKernel::fused};
  EXPECT_EQ(s.saved_elements(), s.pairs() * s.len);
  s.kernel = AttentionKernel::blas_blocks;
  EXPECT_GT(s.saved_elements(), s.pairs() * s.len * s.len / 2);
}

}  // namespace
}  // namespace meshslice
