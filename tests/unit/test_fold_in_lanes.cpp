// core/fold_in_lanes.hpp: every term is taken once, in order, at every length (whole groups of
// lanes, a tail, nothing), and the sum and maximum are those of the terms; where a host compiler
// folds whole registers (the terms' lanes()), the result and the exponentials left in place have
// the bits of the scalar lanes' (the gain dot's to a rounding a term where the compiler may fuse
// its product into the sum).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/fold_in_lanes.hpp"
#include "model/kernels/rmsnorm.hpp"

namespace meshslice {
namespace {

const std::vector<std::size_t> kLengths = {0, 1, 15, 16, 17, 31, 32, 33, 255, 1000};

// A term that records the order it is asked in: a function object with device-callable code,
// as the kernels' terms (nvcc also compiles fold_in_lanes for the device).
struct RecordedTerm {
  std::size_t* taken;
  std::size_t* count;
  KOKKOS_INLINE_FUNCTION double operator()(std::size_t i) const {
    taken[(*count)++] = i;
    return static_cast<double>(3 * i + 1);
  }
};

TEST(FoldInLanes, SumsEveryTermOnceInOrder) {
  for (const std::size_t n : kLengths) {
    std::vector<std::size_t> taken(n + 1, ~std::size_t{0});
    std::size_t count = 0;
    // Integers below 2^53: the double sum is exact whatever the grouping.
    const double sum = fold_in_lanes(n, 0.0, RecordedTerm{taken.data(), &count}, FoldSum());
    EXPECT_EQ(sum, static_cast<double>(3 * n * (n - 1) / 2 + n))  // 1 + 4 + ... + (3n - 2)
        << "n " << n;
    ASSERT_EQ(count, n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(taken[i], i) << "n " << n;
  }
}

TEST(FoldInLanes, SquaresInTheAccumulatorsType) {
  const std::vector<float> x = {3.0f, 1e20f, -2.0f};  // 1e20^2 overflows a float, not a double
  EXPECT_EQ(fold_in_lanes(x.size(), 0.0, RowSquares<float, double>{x.data()}, FoldSum()),
            9.0 + static_cast<double>(1e20f) * static_cast<double>(1e20f) + 4.0);
}

TEST(FoldInLanes, TheMaximumWhereverItSits) {
  for (const std::size_t n : kLengths) {
    for (std::size_t top = 0; top < n; top += 7) {
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = -static_cast<float>(i % 13);
      x[top] = 5.0f;
      const float lowest = std::numeric_limits<float>::lowest();
      EXPECT_EQ(fold_in_lanes(n, lowest, RowValues<float>{x.data()}, FoldMax()), 5.0f)
          << "n " << n << " maximum at " << top;
    }
  }
  const float nine = 9.0f;  // never read: no terms
  EXPECT_EQ(fold_in_lanes(0, -1.0f, RowValues<float>{&nine}, FoldMax()), -1.0f);
}

// A term with its lanes() hidden: fold_in_lanes takes it one term at a time, in scalar lanes.
template <class Term>
struct OneAtATime {
  Term term;
  KOKKOS_INLINE_FUNCTION auto operator()(std::size_t i) const { return term(i); }
};

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Normal values (their sums' bits depend on the order of the terms), and with `specials` every
// fifth one a value fast_exp clamps or a softmax meets: -inf (a masked score), huge and tiny
// ones (which would swamp a sum: they check the exponentials left in place).
std::vector<float> test_values(std::size_t n, unsigned seed, bool specials = false) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(gen);
  const float special[] = {
      -std::numeric_limits<float>::infinity(), 1000.0f, -1000.0f, 88.5f, -87.5f, 0.0f};
  if (specials)
    for (std::size_t i = 0; i < n; i += 5) x[i] = special[(i / 5) % 6];
  return x;
}

#if MESHSLICE_HOST_VECTOR_FOLDS
TEST(FoldInLanes, TheKernelsTermsFoldWholeRegistersOnThisCompiler) {
  // Not the scalar lanes by accident: the terms the row kernels fold give their lanes.
  EXPECT_TRUE((GivesLanes<RowValues<float>, float>::value));
  EXPECT_TRUE((GivesLanes<RowSquares<float, double>, double>::value));
  EXPECT_TRUE((GivesLanes<ExpInPlace<float>, float>::value));
  EXPECT_TRUE((GivesLanes<GainDotTerms<float>, float>::value));
  EXPECT_FALSE((GivesLanes<RecordedTerm, double>::value));
}
#endif

TEST(FoldInLanes, RegistersGiveTheScalarLanesBits) {
  for (const std::size_t n : kLengths) {
    const std::vector<float> x = test_values(n + 1, 7), y = test_values(n + 1, 8),
                             z = test_values(n + 1, 9);
    const std::vector<float> scores = test_values(n + 1, 11, /*specials=*/true);
    const float lowest = std::numeric_limits<float>::lowest();
    EXPECT_TRUE(same_bits(fold_in_lanes(n, lowest, RowValues<float>{scores.data()}, FoldMax()),
                          fold_in_lanes(n, lowest, OneAtATime<RowValues<float>>{{scores.data()}},
                                        FoldMax())))
        << "maximum, n " << n;
    EXPECT_TRUE(same_bits(fold_in_lanes(n, 0.0, RowSquares<float, double>{x.data()}, FoldSum()),
                          fold_in_lanes(n, 0.0, OneAtATime<RowSquares<float, double>>{{x.data()}},
                                        FoldSum())))
        << "squares in double, n " << n;
    EXPECT_TRUE(
        same_bits(fold_in_lanes(n, 0.0f, RowSquares<float>{y.data()}, FoldSum()),
                  fold_in_lanes(n, 0.0f, OneAtATime<RowSquares<float>>{{y.data()}}, FoldSum())))
        << "squares in float, n " << n;
    const GainDotTerms<float> dot{x.data(), y.data(), z.data()};
    const float dot_lanes = fold_in_lanes(n, 0.0f, dot, FoldSum());
    const float dot_scalar =
        fold_in_lanes(n, 0.0f, OneAtATime<GainDotTerms<float>>{dot}, FoldSum());
#ifdef __FP_FAST_FMAF
    // An FMA machine: GCC fuses a term's last multiply into the fold's add, in one form and not
    // in the other as it sees fit, so each term may round once less (core/fold_in_lanes.hpp).
    double magnitude = 0;
    for (std::size_t i = 0; i < n; ++i) magnitude += std::abs(static_cast<double>(dot(i)));
    EXPECT_LE(std::abs(static_cast<double>(dot_lanes) - dot_scalar), 0x1p-22 * magnitude)
        << "gain dot, n " << n;
#else
    EXPECT_TRUE(same_bits(dot_lanes, dot_scalar)) << "gain dot, n " << n;
#endif
    for (const bool specials : {false, true}) {
      const std::vector<float> logits = test_values(n + 1, 10, specials);
      std::vector<float> e = logits, e_scalar = logits;
      const float sum = fold_in_lanes(n, 0.0f, ExpInPlace<float>{e.data(), 1.5f}, FoldSum());
      const float sum_scalar =
          fold_in_lanes(n, 0.0f, OneAtATime<ExpInPlace<float>>{{e_scalar.data(), 1.5f}}, FoldSum());
      if (!specials) {  // (huge exponentials swamp the sum in any order)
        EXPECT_TRUE(same_bits(sum, sum_scalar)) << "exponentials' sum, n " << n;
      }
      ASSERT_EQ(std::memcmp(e.data(), e_scalar.data(), e.size() * sizeof(float)), 0)
          << "the exponentials left in place, n " << n << (specials ? ", special values" : "");
      EXPECT_EQ(e[n], logits[n]) << "wrote past the row, n " << n;
    }
  }
}

}  // namespace
}  // namespace meshslice
