// The attention kernels against each other on one chip's shard, in double: the fused kernels
// (model/kernels/fused_attention.hpp) in both shapes (a team per pair, which keeps the pair's
// keys and values in the forward pass and its queries in the backward; a team per tile) against
// the BLAS-block kernels (model/kernels/attention.hpp), with and without RoPE,
// for sequences of one partial tile, of several tiles with a partial last one, and head
// dimensions narrower than a micro-tile; and each, in float, reading a bf16 run's input. The
// transformer tests check both against the serial reference model end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "core/host_vectors.hpp"
#include "core/kokkos_types.hpp"
#include "model/counter_random.hpp"
#include "model/kernels/attention.hpp"

namespace meshslice {
namespace {

template <class T = double>
Matrix<T> random_matrix(const char* label, std::size_t rows, std::size_t cols,
                        std::uint64_t stream) {
  Matrix<T> m(std::string(label), rows, cols);
  auto host = Kokkos::create_mirror_view(m);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) host(i, j) = counter_normal(7, stream, i, j);
  Kokkos::deep_copy(m, host);
  return m;
}

template <class T = double>
struct Result {
  Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> a, dqkv;
};

// Forward and backward through `attention` on the same qkv and output gradient.
template <class T>
Result<T> run(LocalAttention<T>& attention, const AttentionShape& s, const GemmOperand<T>& qkv,
              const Matrix<T>& da) {
  const std::size_t tokens = s.seqs * s.len, width = s.heads * s.dim;
  Matrix<T> a("a", tokens, width), dqkv("dqkv", tokens, 3 * width);
  Buffer<T> saved("saved", s.saved_elements());
  attention.forward(ExecSpace(), qkv, saved, a);
  attention.backward(ExecSpace(), qkv, a, da, saved, dqkv);
  Kokkos::fence();
  Result<T> r{Kokkos::create_mirror_view(a), Kokkos::create_mirror_view(dqkv)};
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

// This program instantiates the header-only kernels itself, and the linker keeps one copy of
// each: its copies and the library's must be compiled for the same vectors, or the kernels
// tested here are not the ones that train (tests/unit/CMakeLists.txt: meshslice_kernel_flags).
TEST(AttentionKernels, AreCompiledForTheLibrarysVectors) {
  EXPECT_EQ(kHostVectorBytes, library_host_vector_bytes())
      << "this test program's kernels use " << kHostVectorBytes << "-byte vectors, the library's "
      << library_host_vector_bytes();
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
        const Result<> expected = run<double>(blas, s, qkv, da);
        s.kernel = AttentionKernel::fused;
        for (int pair_teams : {0, 1}) {
          LocalAttention<double> fused(s, true, pair_teams);
          const Result<> got = run<double>(fused, s, qkv, da);
          const std::string shape = pair_teams ? "a team per pair" : "a team per tile";
          EXPECT_LT(max_relative_difference(got.a, expected.a), 1e-12) << where << ", " << shape;
          EXPECT_LT(max_relative_difference(got.dqkv, expected.dqkv), 1e-12)
              << where << ", " << shape;
        }
      }
}

template <class V>
std::size_t bits_apart(const V& x, const V& y) {
  std::size_t apart = 0;
  for (std::size_t i = 0; i < x.extent(0); ++i)
    for (std::size_t j = 0; j < x.extent(1); ++j) apart += x(i, j) != y(i, j);
  return apart;
}

// A bf16 run keeps attention's input in bf16 (AttentionModule's Saved set) and each kernel widens
// it to float as it loads it: the same results, bit for bit, as from its values widened first.
TEST(AttentionKernels, EachKernelReadsABf16InputAsItsValuesInFloat) {
  for (bool rope : {false, true})
    for (int kernel : {0, 1, 2}) {  // the BLAS blocks; fused, a team per tile; a team per pair
      const AttentionShape s{
          2, 72, 3, 16, rope, kernel == 0 ? AttentionKernel::blas_blocks : AttentionKernel::fused};
      SCOPED_TRACE(std::string(kernel == 0 ? "BLAS blocks" : "fused") + (rope ? ", RoPE" : ""));
      const std::size_t tokens = s.seqs * s.len, width = 3 * s.heads * s.dim;
      const Matrix<float> qkv = random_matrix<float>("qkv", tokens, width, 1);
      const Matrix<float> da = random_matrix<float>("da", tokens, s.heads * s.dim, 2);
      GemmOperand<float> kept;
      kept.value = Matrix<float>("kept", tokens, width);  // the memory the bf16 values live in
      kept.rounded =
          Matrix<bfloat16>(reinterpret_cast<bfloat16*>(kept.value.data()), tokens, width);
      const Matrix<float> widened("widened", tokens, width);
      to_bfloat16(ExecSpace(), qkv, kept.rounded, Matrix<float>(), Matrix<bfloat16>());
      to_float(ExecSpace(), kept.rounded, widened);
      LocalAttention<float> attention(s, true, kernel == 2 ? 1 : 0);
      const Result<float> from_bf16 = run<float>(attention, s, kept, da);
      const Result<float> from_float = run<float>(attention, s, widened, da);
      EXPECT_EQ(bits_apart(from_bf16.a, from_float.a), 0u);
      EXPECT_EQ(bits_apart(from_bf16.dqkv, from_float.dqkv), 0u);
      EXPECT_GT(bits_apart(run<float>(attention, s, qkv, da).a, from_float.a), 0u)
          << "the rounding made no difference";
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
