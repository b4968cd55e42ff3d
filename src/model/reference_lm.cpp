#include "model/reference_lm.hpp"

#include <algorithm>
#include <cmath>

namespace meshslice {

std::vector<double> reference_embedding(const std::vector<double>& table, std::size_t hidden,
                                        const std::vector<int>& ids) {
  std::vector<double> x(ids.size() * hidden);
  for (std::size_t t = 0; t < ids.size(); ++t)
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(ids[t] * hidden), hidden,
                x.begin() + static_cast<std::ptrdiff_t>(t * hidden));
  return x;
}

void reference_embedding_gradient(const std::vector<double>& dx, std::size_t hidden,
                                  const std::vector<int>& ids, std::vector<double>& dtable) {
  for (std::size_t t = 0; t < ids.size(); ++t)
    for (std::size_t c = 0; c < hidden; ++c)
      dtable[static_cast<std::size_t>(ids[t]) * hidden + c] += dx[t * hidden + c];
}

double reference_cross_entropy(const std::vector<double>& logits, std::size_t vocab,
                               const std::vector<int>& targets, double scale,
                               std::vector<double>& dlogits) {
  dlogits.assign(logits.size(), 0.0);
  double loss = 0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const double* row = &logits[t * vocab];
    const double max = *std::max_element(row, row + vocab);
    double sum = 0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
    const std::size_t target = static_cast<std::size_t>(targets[t]);
    loss += std::log(sum) + max - row[target];
    for (std::size_t v = 0; v < vocab; ++v)
      dlogits[t * vocab + v] = scale * (std::exp(row[v] - max) / sum - (v == target ? 1.0 : 0.0));
  }
  return loss;
}

}  // namespace meshslice
