#include "pipeline/stage_split.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "core/errors.hpp"

namespace meshslice {

double StageSplit::slowest() const { return *std::max_element(seconds.begin(), seconds.end()); }

double StageSplit::mean() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum / static_cast<double>(seconds.size());
}

std::string StageSplit::str() const {
  std::ostringstream blocks, times;
  for (std::size_t s = 0; s + 1 < first.size(); ++s) {
    const char* sep = s ? " | " : "";
    blocks << sep << first[s];
    if (first[s + 1] - first[s] > 1) blocks << "-" << first[s + 1] - 1;
    times << sep << seconds[s] * 1e3;
  }
  return concat("blocks ", blocks.str(), " (est. ", times.str(), " ms)");
}

StageSplit balanced_split(const std::vector<double>& block_seconds, std::size_t stages,
                          double last_stage_extra) {
  const std::size_t n = block_seconds.size();
  require(stages >= 1 && stages <= n, "the pipeline has ", stages,
          " (virtual) stages but the "
          "model only ",
          n, " blocks; every stage needs a block: use at most ", n,
          " stages x virtual stages, or more blocks");
  std::vector<double> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + block_seconds[i];
  // slowest[j][i]: the least slowest-stage time of the first i blocks over j stages; the last of
  // those stages starts at cut[j][i]. Chains are short (at most a few hundred blocks): O(j n^2).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> slowest(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(stages + 1, std::vector<std::size_t>(n + 1, 0));
  slowest[0][0] = 0;
  for (std::size_t j = 1; j <= stages; ++j)
    for (std::size_t i = j; i <= n; ++i)
      for (std::size_t c = j - 1; c < i; ++c) {
        const double last = prefix[i] - prefix[c] + (j == stages && i == n ? last_stage_extra : 0);
        const double t = std::max(slowest[j - 1][c], last);
        // Among ties (up to the sums' rounding) the latest cut, so the later stages get the
        // fewer blocks.
        if (t <= slowest[j][i] * (1 + 1e-12)) {
          slowest[j][i] = t;
          cut[j][i] = c;
        }
      }
  StageSplit split;
  split.first.assign(stages + 1, n);
  for (std::size_t j = stages, i = n; j > 0; --j) {
    split.first[j - 1] = cut[j][i];
    i = cut[j][i];
  }
  for (std::size_t s = 0; s < stages; ++s)
    split.seconds.push_back(prefix[split.first[s + 1]] - prefix[split.first[s]] +
                            (s + 1 == stages ? last_stage_extra : 0));
  return split;
}

}  // namespace meshslice
