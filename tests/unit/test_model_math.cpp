// The vectorizable exp against the library's (the MLP activations' formulas:
// test_mlp_activations.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "core/fast_exp.hpp"

namespace meshslice::testing {
namespace {

TEST(FastExp, FloatIsWithinTwoUlpsOfExpOverItsRange) {
  double worst = 0;
  for (int i = 0; i <= 1000000; ++i) {
    const float x = -87.0f + 175.0f * static_cast<float>(i) / 1000000.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(kmath::fast_exp(x) - want) / want);
  }
  EXPECT_LT(worst, 2.4e-7);  // 2 ulps of float
}

TEST(FastExp, SaturatesBeyondTheFloatRangeAndDoubleIsExact) {
  EXPECT_GT(kmath::fast_exp(1000.0f), 1e38f);
  EXPECT_FALSE(std::isinf(kmath::fast_exp(1000.0f)));
  EXPECT_GE(kmath::fast_exp(-1000.0f), 0.0f);
  EXPECT_LT(kmath::fast_exp(-1000.0f), 1e-37f);
  EXPECT_EQ(kmath::fast_exp(0.0f), 1.0f);
  EXPECT_EQ(kmath::fast_exp(1.5), std::exp(1.5));
}

}  // namespace
}  // namespace meshslice::testing
