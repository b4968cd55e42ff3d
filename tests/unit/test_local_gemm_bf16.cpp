// bfloat16's conversions, and the bf16 local GEMM by every route this build has against a double
// GEMM of the same bf16 operands.
#include "gemm/local_gemm_bf16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace meshslice {
namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST(Bfloat16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_float(to_bfloat16(-2.5f)), -2.5f);
  // Halfway between 0x3f80 and 0x3f81: to the even one; just past halfway: up.
  EXPECT_EQ(to_bfloat16(from_bits(0x3f808000u)).bits, 0x3f80);
  EXPECT_EQ(to_bfloat16(from_bits(0x3f818000u)).bits, 0x3f82);
  EXPECT_EQ(to_bfloat16(from_bits(0x3f808001u)).bits, 0x3f81);
  EXPECT_EQ(to_bfloat16(from_bits(0x3f807fffu)).bits, 0x3f80);
}

TEST(Bfloat16, KeepsNanInfinityAndOverflowsToInfinity) {
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(from_bits(0x7f800001u)))));  // a low-payload NaN
  EXPECT_EQ(to_float(to_bfloat16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_bfloat16(std::numeric_limits<float>::max())),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_bfloat16(-0.0f)), 0.0f);
  EXPECT_TRUE(std::signbit(to_float(to_bfloat16(-0.0f))));
}

// a (m x k) b (k x n) of bf16 values, and c = a b in double on the host.
struct Problem {
  Matrix<bfloat16> a, b;
  std::vector<double> c;
};

Problem problem(std::size_t m, std::size_t n, std::size_t k) {
  Problem p{Matrix<bfloat16>("a", m, k), Matrix<bfloat16>("b", k, n),
            std::vector<double>(m * n, 0.0)};
  auto ha = Kokkos::create_mirror_view(p.a);
  auto hb = Kokkos::create_mirror_view(p.b);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < k; ++l) ha(i, l) = to_bfloat16(std::sin(0.37f * (i * k + l)));
  for (std::size_t l = 0; l < k; ++l)
    for (std::size_t j = 0; j < n; ++j) hb(l, j) = to_bfloat16(std::cos(0.21f * (l * n + j)));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < k; ++l)
        p.c[i * n + j] += double(to_float(ha(i, l))) * double(to_float(hb(l, j)));
  Kokkos::deep_copy(p.a, ha);
  Kokkos::deep_copy(p.b, hb);
  return p;
}

TEST(LocalGemmBf16, EveryRouteMatchesADoubleGemmOfTheSameOperands) {
  const std::size_t m = 37, n = 29, k = 64;
  const Problem p = problem(m, n, k);
  for (const Bf16GemmRoute route : {Bf16GemmRoute::onednn, Bf16GemmRoute::float_panels}) {
    if (!bf16_route_available(route)) continue;
    SCOPED_TRACE(bf16_route_name(route));
    LocalGemmBf16 gemm(route, m + 3, n, k);  // made for more rows than it runs
    Matrix<float> c("c", m, n);
    ExecSpace space;
    gemm.run(space, p.a, p.b, 0.0f, c);
    gemm.run(space, p.a, p.b, 1.0f, c);  // c += a b: twice the product
    space.fence();
    const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    // Exact products summed in float: float's rounding over k terms of size about 1.
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        ASSERT_NEAR(hc(i, j), 2 * p.c[i * n + j], 1e-5 * k) << i << ", " << j;
  }
}

}  // namespace
}  // namespace meshslice
