// The MLP activations' table (block/mlp_activations.hpp): every activation's derivative against
// finite differences in double and float, each formula against its textbook form, and the
// table's names, parsing and default widths.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "block/mlp_activations.hpp"
#include "core/errors.hpp"

namespace meshslice::testing {
namespace {

template <class Activation>
class EveryActivation : public ::testing::Test {};
using Activations =
    ::testing::Types<GeluActivation, SwigluActivation, GegluActivation, Relu2Activation>;
TYPED_TEST_SUITE(EveryActivation, Activations);

TYPED_TEST(EveryActivation, DerivativeMatchesFiniteDifferencesInDoubleAndFloat) {
  using A = TypeParam;
  const double h = 1e-6;
  for (double x = -7.99; x <= 8; x += 0.05) {  // no point within h of ReLU's kink at 0
    const double numeric = (A::value(x + h) - A::value(x - h)) / (2 * h);
    EXPECT_NEAR(A::derivative(x), numeric, 1e-8) << A::name << " at " << x;
    EXPECT_NEAR(A::derivative(static_cast<float>(x)), numeric, 1e-5 * (1 + std::abs(numeric)))
        << A::name << " at " << x;
    EXPECT_NEAR(A::value(static_cast<float>(x)), A::value(x), 1e-6 * (1 + std::abs(x)));
  }
}

TYPED_TEST(EveryActivation, TheTableNamesItAndParsesItsName) {
  using A = TypeParam;
  bool listed = false;
  for (const MlpKind mlp : mlp_kinds()) {
    if (std::string(mlp_name(mlp)) != A::name) continue;
    listed = true;
    EXPECT_EQ(parse_mlp(A::name, "model.mlp"), mlp);
    EXPECT_EQ(mlp_gated(mlp), A::gated);
    EXPECT_EQ(default_ffn(768, mlp), A::default_ffn(768));
    with_mlp_activation(mlp, [](auto a) { EXPECT_STREQ(decltype(a)::name, A::name); });
  }
  EXPECT_TRUE(listed) << A::name << " is not in MlpActivations";
}

double gelu_tanh_form(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

TEST(MlpActivations, GeluInItsSigmoidFormEqualsTheTanhForm) {
  for (double x = -10; x <= 10; x += 0.01) {
    EXPECT_NEAR(GeluActivation::value(x), gelu_tanh_form(x), 1e-15 * (1 + std::abs(x))) << x;
    EXPECT_NEAR(GeluActivation::value(static_cast<float>(x)), gelu_tanh_form(x),
                1e-6 * (1 + std::abs(x)))
        << x;
    EXPECT_EQ(GegluActivation::value(x), GeluActivation::value(x)) << x;  // GeGLU's gate
  }
}

TEST(MlpActivations, Relu2IsTheSquareOfRelu) {
  for (double x = -4; x <= 4; x += 0.5)
    EXPECT_EQ(Relu2Activation::value(x), x > 0 ? x * x : 0.0) << x;
}

TEST(MlpActivations, SwigluGatesWithSilu) {
  for (double g = -8; g <= 8; g += 0.25)
    EXPECT_NEAR(SwigluActivation::value(g), g / (1 + std::exp(-g)), 1e-14 * (1 + std::abs(g))) << g;
}

TEST(MlpActivations, NamesDefaultWidthsAndErrors) {
  EXPECT_EQ(mlp_names(), "gelu, swiglu, geglu or relu2");
  EXPECT_FALSE(mlp_gated(MlpKind::gelu));
  EXPECT_TRUE(mlp_gated(MlpKind::swiglu));
  EXPECT_TRUE(mlp_gated(MlpKind::geglu));
  EXPECT_FALSE(mlp_gated(MlpKind::relu2));
  EXPECT_EQ(default_ffn(4096, MlpKind::gelu), 16384u);
  EXPECT_EQ(default_ffn(4096, MlpKind::swiglu), 11008u);  // Llama 2 7B's
  EXPECT_EQ(default_ffn(768, MlpKind::geglu), 2048u);     // T5 v1.1 base's
  EXPECT_EQ(default_ffn(768, MlpKind::relu2), 3072u);
  try {
    parse_mlp("relu", "model.mlp");
    FAIL() << "relu parsed";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "model.mlp = 'relu' is not an MLP; use gelu, swiglu, geglu or relu2");
  }
}

}  // namespace
}  // namespace meshslice::testing
