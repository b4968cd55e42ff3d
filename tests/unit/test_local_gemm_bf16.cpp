// bfloat16's conversions, and the bf16 local GEMM by every route this build has against a double
// GEMM of the same bf16 operands.
#include "exec/local_gemm_bf16.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.hpp"

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

// Two matrices rounded in one launch, as the scalar rounds each element: sizes that are not a
// multiple of the kernel's runs, one past a run, and a NaN and ties among the values.
TEST(Bfloat16, RoundsTwoMatricesAsEachElement) {
  const ExecSpace space;
  for (const auto [ra, ca, rb, cb] :
       {std::array<std::size_t, 4>{3, 5, 7, 2}, std::array<std::size_t, 4>{97, 101, 1, 1},
        std::array<std::size_t, 4>{1, 1, 128, 65}}) {
    Matrix<float> a("a", ra, ca), b("b", rb, cb);
    Matrix<bfloat16> a16("a16", ra, ca), b16("b16", rb, cb);
    const auto ha = Kokkos::create_mirror_view(a), hb = Kokkos::create_mirror_view(b);
    const auto value = [](std::size_t i) {
      if (i % 1001 == 7) return std::numeric_limits<float>::quiet_NaN();
      return from_bits(0x3f800000u + static_cast<std::uint32_t>(i * 0x2f41u % 0x10000u));
    };
    for (std::size_t i = 0; i < ra * ca; ++i) ha.data()[i] = value(i);
    for (std::size_t i = 0; i < rb * cb; ++i) hb.data()[i] = -value(i + 3);
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(b, hb);
    to_bfloat16(space, a, a16, b, b16);
    const auto ha16 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a16);
    const auto hb16 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b16);
    for (std::size_t i = 0; i < ra * ca; ++i)
      ASSERT_EQ(ha16.data()[i].bits, to_bfloat16(ha.data()[i]).bits) << "a[" << i << "]";
    for (std::size_t i = 0; i < rb * cb; ++i)
      ASSERT_EQ(hb16.data()[i].bits, to_bfloat16(hb.data()[i]).bits) << "b[" << i << "]";
  }
}

// op(a) (m x k) and op(b) (k x n) of bf16 values, stored transposed or not, and
// c = alpha op(a) op(b) in double on the host.
struct Problem {
  Matrix<bfloat16> a, b;
  std::vector<double> c;
};

Problem problem(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb, double alpha) {
  Problem p{ta ? Matrix<bfloat16>("a", k, m) : Matrix<bfloat16>("a", m, k),
            tb ? Matrix<bfloat16>("b", n, k) : Matrix<bfloat16>("b", k, n),
            std::vector<double>(m * n, 0.0)};
  auto ha = Kokkos::create_mirror_view(p.a);
  auto hb = Kokkos::create_mirror_view(p.b);
  const auto a_at = [&](std::size_t i, std::size_t l) -> bfloat16& {
    return ta ? ha(l, i) : ha(i, l);
  };
  const auto b_at = [&](std::size_t l, std::size_t j) -> bfloat16& {
    return tb ? hb(j, l) : hb(l, j);
  };
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < k; ++l) a_at(i, l) = to_bfloat16(std::sin(0.37f * (i * k + l)));
  for (std::size_t l = 0; l < k; ++l)
    for (std::size_t j = 0; j < n; ++j) b_at(l, j) = to_bfloat16(std::cos(0.21f * (l * n + j)));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < k; ++l)
        p.c[i * n + j] += alpha * double(to_float(a_at(i, l))) * double(to_float(b_at(l, j)));
  Kokkos::deep_copy(p.a, ha);
  Kokkos::deep_copy(p.b, hb);
  return p;
}

TEST(LocalGemmBf16, EveryRouteMatchesADoubleGemmOfTheSameOperands) {
  const std::size_t m = 37, n = 29, k = 64;
  const float alpha = 0.5f;
  for (const Bf16GemmRoute route : kBf16GemmRoutes) {
    if (!bf16_route_available(route)) continue;
    LocalGemmBf16 gemm(route, (m + 3) * k, k * n);  // made for more rows than it runs
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        SCOPED_TRACE(concat(bf16_route_name(route), ta ? " A^T" : " A", tb ? " B^T" : " B"));
        const Problem p = problem(m, n, k, ta, tb, alpha);
        Matrix<float> c("c", m, n);
        ExecSpace space;
        gemm.run(space, ta, tb, alpha, p.a, p.b, 0.0f, c);
        gemm.run(space, ta, tb, alpha, p.a, p.b, 2.0f, c);  // c = ... + 2 c: three times it
        space.fence();
        const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
        // Exact products summed in float: float's rounding over k terms of size about 1.
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; ++j)
            ASSERT_NEAR(hc(i, j), 3 * p.c[i * n + j], 1e-5 * k) << i << ", " << j;
      }
  }
}

// A route that does not run here (oneDNN where it has no bf16 matmul for this CPU, cuBLAS in a
// CPU build) is one clear error naming what it needs, and the fastest route is one that runs.
TEST(LocalGemmBf16, ARouteThatDoesNotRunHereIsAnErrorNamingWhatItNeeds) {
  EXPECT_TRUE(bf16_route_available(fastest_bf16_route()));
  for (const Bf16GemmRoute route : kBf16GemmRoutes) {
    if (bf16_route_available(route)) continue;
    try {
      LocalGemmBf16 gemm(route, 16, 16);
      ADD_FAILURE() << bf16_route_name(route) << " was made where it does not run";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(bf16_route_needs(route)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace meshslice
