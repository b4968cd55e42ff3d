#include "data/document_split.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "data/seeded_permutation.hpp"

namespace meshslice::data {

namespace {

// Stream of the seed that shuffles documents (data/seeded_permutation.hpp); epochs use others.
constexpr std::uint64_t kSplitStream = 0;

std::int64_t held_out_count(std::int64_t documents, double fraction) {
  if (documents < 2 || fraction <= 0) return 0;
  const auto rounded = static_cast<std::int64_t>(std::llround(fraction * documents));
  return std::clamp<std::int64_t>(rounded, 1, documents - 1);
}

}  // namespace

void check_held_out_fraction(double fraction, const char* what) {
  require(fraction >= 0 && fraction < 1, what, " = ", fraction,
          " must be at least 0 and below 1 (the share of documents held out for evaluation)");
}

DocumentSplit split_documents(std::int64_t documents, double held_out_fraction,
                              std::uint64_t seed) {
  check_held_out_fraction(held_out_fraction, "the held-out fraction");
  const std::vector<std::int64_t> order =
      seeded_permutation(documents, stream_seed(seed, kSplitStream));
  const auto held = static_cast<std::size_t>(held_out_count(documents, held_out_fraction));
  DocumentSplit split;
  split.held_out.assign(order.begin(), order.begin() + held);
  split.train.assign(order.begin() + held, order.end());
  std::sort(split.held_out.begin(), split.held_out.end());
  std::sort(split.train.begin(), split.train.end());
  return split;
}

}  // namespace meshslice::data
