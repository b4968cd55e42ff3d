// The pipeline's stage split without MPI: consecutive blocks per stage, the slowest stage as fast
// as any split allows (checked against every split of small chains), the extra blocks of an
// uneven split on the earlier stages (the last one computes the loss), and clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "pipeline/stage_split.hpp"
#include "test_support.hpp"

namespace meshslice {
namespace {

using test::expect_contains;
using test::user_error_of;

std::vector<std::size_t> boundaries(const StageSplit& s) { return s.first; }

TEST(StageSplit, EqualBlocksSplitEvenlyWithTheExtraOnesEarly) {
  EXPECT_EQ(boundaries(balanced_split(std::vector<double>(4, 1.0), 2)),
            (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(boundaries(balanced_split(std::vector<double>(5, 1.0), 2, 0.01)),
            (std::vector<std::size_t>{0, 3, 5}));
  EXPECT_EQ(boundaries(balanced_split(std::vector<double>(6, 1.0), 4, 0.01)),
            (std::vector<std::size_t>{0, 2, 4, 5, 6}));
  const StageSplit one = balanced_split(std::vector<double>(3, 2.0), 3);
  EXPECT_EQ(boundaries(one), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(one.slowest(), 2.0);
  EXPECT_DOUBLE_EQ(one.mean(), 2.0);
}

TEST(StageSplit, UnequalBlocksBalanceTheSlowestStage) {
  const StageSplit s = balanced_split({1, 1, 1, 5}, 2);
  EXPECT_EQ(boundaries(s), (std::vector<std::size_t>{0, 3, 4}));
  EXPECT_EQ(s.seconds, (std::vector<double>{3, 5}));
  EXPECT_EQ(s.blocks(0), 3u);
  // The loss on the last stage counts.
  EXPECT_EQ(boundaries(balanced_split({2, 2, 2}, 2, 3)), (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_EQ(balanced_split({1, 2}, 2).str(), "blocks 0 | 1 (est. 1000 | 2000 ms)");
}

// Every way of cutting n blocks into p non-empty runs; the best one's slowest stage.
double brute_force(const std::vector<double>& costs, std::size_t stages, double extra) {
  const std::size_t n = costs.size();
  double best = 1e300;
  std::vector<std::size_t> cut(stages - 1);
  std::vector<bool> chosen(n - 1, false);
  std::fill(chosen.begin(), chosen.begin() + static_cast<long>(stages - 1), true);
  do {
    double slowest = 0, stage = 0;
    for (std::size_t i = 0; i < n; ++i) {
      stage += costs[i];
      if (i + 1 == n || chosen[i]) {
        slowest = std::max(slowest, stage + (i + 1 == n ? extra : 0));
        stage = 0;
      }
    }
    best = std::min(best, slowest);
  } while (std::prev_permutation(chosen.begin(), chosen.end()));
  return best;
}

TEST(StageSplit, NoSplitHasASlowerSlowestStageThanAnyOther) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> cost(0.1, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 2 + random() % 8, stages = 1 + random() % n;
    std::vector<double> costs(n);
    for (double& c : costs) c = cost(random);
    const double extra = trial % 2 ? cost(random) : 0.0;
    const StageSplit s = balanced_split(costs, stages, extra);
    ASSERT_EQ(s.first.size(), stages + 1);
    EXPECT_EQ(s.first.front(), 0u);
    EXPECT_EQ(s.first.back(), n);
    for (std::size_t j = 0; j < stages; ++j) EXPECT_GE(s.blocks(j), 1u) << "trial " << trial;
    EXPECT_NEAR(s.slowest(), brute_force(costs, stages, extra), 1e-9) << "trial " << trial;
  }
}

TEST(StageSplit, MoreStagesThanBlocksIsAClearError) {
  expect_contains(user_error_of([] {
                    balanced_split({1, 1}, 3);
                  }),
                  {"3 (virtual) stages but the model only 2 blocks"});
}

}  // namespace
}  // namespace meshslice
