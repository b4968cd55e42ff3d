// batched_gemm (exec/batched_gemm.hpp) against a GEMM per item written out here, on this build's
// device: items that lie further apart than their size (the gap must be neither read nor
// written), every transpose combination, beta 0 (c's old values ignored) and 1. A CUDA build
// runs cuBLAS's strided batch, any other build a BLAS call per item.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "core/kokkos_types.hpp"
#include "exec/batched_gemm.hpp"
#include "model/counter_random.hpp"

namespace meshslice {
namespace {

using HostBuffer = Kokkos::View<double*, Kokkos::HostSpace>;

// Each item's value at (i, j) of a rows x cols matrix in a batch of `stride` apart.
double& at(const HostBuffer& x, std::size_t item, std::size_t stride, std::size_t cols,
           std::size_t i, std::size_t j) {
  return x(item * stride + i * cols + j);
}

template <class T>
void check(bool ta, bool tb, T beta) {
  constexpr std::size_t count = 3, m = 5, n = 7, k = 4, gap = 3;
  const std::size_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const std::size_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  const std::size_t sa = a_rows * a_cols + gap, sb = b_rows * b_cols + gap, sc = m * n + gap;
  HostBuffer a("a", count * sa), b("b", count * sb), c("c", count * sc), want("want", count * sc);
  for (std::size_t e = 0; e < count * sa; ++e) a(e) = counter_normal(3, 1, e, 0);
  for (std::size_t e = 0; e < count * sb; ++e) b(e) = counter_normal(3, 2, e, 0);
  for (std::size_t e = 0; e < count * sc; ++e) want(e) = c(e) = counter_normal(3, 3, e, 0);
  const double alpha = 0.5;
  for (std::size_t item = 0; item < count; ++item)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::size_t l = 0; l < k; ++l)
          sum += (ta ? at(a, item, sa, a_cols, l, i) : at(a, item, sa, a_cols, i, l)) *
                 (tb ? at(b, item, sb, b_cols, j, l) : at(b, item, sb, b_cols, l, j));
        double& out = at(want, item, sc, n, i, j);
        out = alpha * sum + (beta == T(0) ? 0.0 : double(beta) * out);
      }

  auto to_device = [](const HostBuffer& x) {
    Buffer<T> d("d", x.extent(0));
    auto h = Kokkos::create_mirror_view(d);
    for (std::size_t e = 0; e < x.extent(0); ++e) h(e) = static_cast<T>(x(e));
    Kokkos::deep_copy(d, h);
    return d;
  };
  const Buffer<T> da = to_device(a), db = to_device(b), dc = to_device(c);
  const ExecSpace space;
  batched_gemm<T>(space, ta, tb, static_cast<T>(alpha), {Matrix<T>(da.data(), a_rows, a_cols), sa},
                  {Matrix<T>(db.data(), b_rows, b_cols), sb}, beta,
                  {Matrix<T>(dc.data(), m, n), sc}, count);
  space.fence();
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc);
  const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-13;
  for (std::size_t e = 0; e < count * sc; ++e)
    ASSERT_NEAR(got(e), want(e), tolerance)
        << "element " << e << " (item " << e / sc << ", "
        << (e % sc < m * n ? "inside" : "in the gap after") << " it), ta " << ta << " tb " << tb
        << " beta " << beta;
}

TEST(BatchedGemm, EveryTransposeAndBetaMatchesAGemmPerItem) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      check<double>(ta, tb, 0.0);
      check<double>(ta, tb, 1.0);
      check<float>(ta, tb, 0.0f);
      check<float>(ta, tb, 1.0f);
    }
}

}  // namespace
}  // namespace meshslice
