// core/fold_in_lanes.hpp: every term is taken once, in order, at every length (whole groups of
// lanes, a tail, nothing), and the sum and maximum are those of the terms.
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <vector>

#include "core/fold_in_lanes.hpp"

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

}  // namespace
}  // namespace meshslice
