// The model's scalar formulas: the vectorizable exp against the library's, and GeLU in its
// sigmoid form against the tanh form it replaces, with its derivative against finite
// differences.
#include <gtest/gtest.h>

#include <cmath>

#include "core/fast_exp.hpp"
#include "model/model_math.hpp"

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

double gelu_tanh_form(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

TEST(Gelu, SigmoidFormEqualsTheTanhForm) {
  for (double x = -10; x <= 10; x += 0.01) {
    EXPECT_NEAR(gelu(x), gelu_tanh_form(x), 1e-15 * (1 + std::abs(x))) << x;
    EXPECT_NEAR(gelu(static_cast<float>(x)), gelu_tanh_form(x), 1e-6 * (1 + std::abs(x))) << x;
  }
}

TEST(Gelu, DerivativeMatchesFiniteDifferences) {
  const double h = 1e-6;
  for (double x = -6; x <= 6; x += 0.05) {
    const double numeric = (gelu(x + h) - gelu(x - h)) / (2 * h);
    EXPECT_NEAR(gelu_derivative(x), numeric, 1e-8) << x;
    EXPECT_NEAR(gelu_derivative(static_cast<float>(x)), numeric, 1e-5) << x;
  }
}

TEST(Swiglu, IsSiluOfTheGateTimesUpAndItsDerivativesMatchFiniteDifferences) {
  const double h = 1e-6;
  for (double g = -8; g <= 8; g += 0.25)
    for (const double u : {-1.5, 0.3, 2.0}) {
      EXPECT_NEAR(swiglu(g, u), g / (1 + std::exp(-g)) * u, 1e-14 * (1 + std::abs(g))) << g;
      double d_gate = 0, d_up = 0;
      swiglu_derivatives(g, u, d_gate, d_up);
      EXPECT_NEAR(d_gate, (swiglu(g + h, u) - swiglu(g - h, u)) / (2 * h), 1e-8) << g;
      EXPECT_NEAR(d_up, (swiglu(g, u + h) - swiglu(g, u - h)) / (2 * h), 1e-8) << g;
      float fg = 0, fu = 0;
      swiglu_derivatives(static_cast<float>(g), static_cast<float>(u), fg, fu);
      EXPECT_NEAR(fg, d_gate, 1e-5 * (1 + std::abs(d_gate))) << g;
    }
}

}  // namespace
}  // namespace meshslice::testing
