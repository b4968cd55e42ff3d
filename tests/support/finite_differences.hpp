#pragma once
// Gradients checked against central differences of the loss, for the serial references'
// hand-written backward passes (tests/unit/test_reference_model.cpp, test_reference_lm.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace meshslice {

// d loss / d value by central differences, the loss a function of `value` alone.
template <class Loss>
double central_difference(double& value, const Loss& loss) {
  const double step = 1e-5;
  const double saved = value;
  value = saved + step;
  const double plus = loss();
  value = saved - step;
  const double minus = loss();
  value = saved;
  return (plus - minus) / (2 * step);
}

// Checks every element of `analytic` against the difference quotient of `values` to 1e-6
// relative; the absolute 1e-9 only covers gradients so small that the quotient's rounding
// (~1e-10 here) dominates. Reports the worst element once per tensor.
template <class Loss>
void expect_gradient(const std::vector<double>& analytic, std::vector<double>& values,
                     const Loss& loss, const std::string& what) {
  ASSERT_EQ(analytic.size(), values.size()) << what;
  double worst = 0, largest = 0;
  std::size_t worst_element = 0;
  double worst_numeric = 0;
  for (std::size_t e = 0; e < values.size(); ++e) {
    const double numeric = central_difference(values[e], loss);
    const double badness = std::abs(analytic[e] - numeric) / (1e-6 * std::abs(numeric) + 1e-9);
    if (badness > worst) {
      worst = badness;
      worst_element = e;
      worst_numeric = numeric;
    }
    largest = std::max(largest, std::abs(numeric));
  }
  EXPECT_LE(worst, 1.0) << what << ": element " << worst_element << " has gradient "
                        << analytic[worst_element] << ", finite differences " << worst_numeric;
  EXPECT_GT(largest, 1e-3) << what << ": gradients too small for the check to mean anything";
}

}  // namespace meshslice
