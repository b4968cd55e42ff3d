// Samples of a split (data/token_samples.hpp): one epoch covers every train token in order, the
// held-out documents stay out of train, the order is fixed by the seed and changes per epoch;
// and the seeded shuffle is pinned (data/seeded_permutation.hpp), so it stays the same across
// compilers and standard libraries.
#include "data/token_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "data/indexed_dataset_writer.hpp"
#include "data/seeded_permutation.hpp"
#include "test_support.hpp"

namespace meshslice::data {
namespace {

constexpr std::int64_t kDocuments = 40;
constexpr std::int64_t kVocabulary = 1000;

// kDocuments documents of 0 to 12 tokens (one empty), every token id used once: a token tells
// the document and the place it came from.
std::string write_documents(const test::ScratchDir& dir) {
  const std::string prefix = (dir.path() / "samples").string();
  IndexedDatasetWriter writer(prefix, kVocabulary);
  std::int32_t next = 0;
  for (std::int64_t d = 0; d < kDocuments; ++d) {
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(d == 5 ? 0 : 3 + (d * 7) % 10));
    for (auto& t : tokens) t = next++;
    writer.add_document(tokens);
  }
  writer.finish();
  return prefix;
}

TokenSamples samples_of(const std::string& prefix, std::uint64_t seed, std::int64_t seq_len = 8) {
  return TokenSamples(IndexedDataset(prefix, kVocabulary), SampleSettings{seq_len, 0.2, seed});
}

std::vector<std::int32_t> concatenated(const TokenSamples& samples, Split split) {
  std::vector<std::int32_t> all;
  for (const std::int64_t d : samples.documents(split)) {
    const auto tokens = samples.dataset().document(d);
    all.insert(all.end(), tokens.begin(), tokens.end());
  }
  return all;
}

std::vector<std::int64_t> starts_of_epoch(const TokenSamples& samples, Split split,
                                          std::int64_t epoch) {
  std::vector<std::int64_t> starts;
  const std::int64_t n = samples.samples(split);
  for (std::int64_t i = epoch * n; i < (epoch + 1) * n; ++i)
    starts.push_back(samples.sample_start(split, i));
  return starts;
}

TEST(TokenSamples, SplitsByDocument) {
  test::ScratchDir dir;
  const TokenSamples samples = samples_of(write_documents(dir), 7);
  const auto& train = samples.documents(Split::train);
  const auto& held = samples.documents(Split::held_out);
  EXPECT_EQ(held.size(), 8u);  // round(0.2 x 40)
  std::vector<std::int64_t> all(train);
  all.insert(all.end(), held.begin(), held.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> expected(kDocuments);
  for (std::int64_t d = 0; d < kDocuments; ++d) expected[d] = d;
  EXPECT_EQ(all, expected) << "every document in exactly one split";
  EXPECT_TRUE(std::is_sorted(train.begin(), train.end()));
}

TEST(TokenSamples, OneEpochCoversTheTrainTokensInOrderAndNoHeldOutToken) {
  test::ScratchDir dir;
  const TokenSamples samples = samples_of(write_documents(dir), 7);
  const std::int64_t seq_len = samples.sample_tokens() - 1;
  for (const Split split : {Split::train, Split::held_out}) {
    const std::vector<std::int32_t> stream = concatenated(samples, split);
    const std::int64_t n = samples.samples(split);
    ASSERT_EQ(n, (static_cast<std::int64_t>(stream.size()) - 1) / seq_len);
    ASSERT_GT(n, 1);
    std::vector<std::int64_t> starts = starts_of_epoch(samples, split, 0);
    std::vector<std::int32_t> sample(static_cast<std::size_t>(seq_len + 1));
    for (std::int64_t i = 0; i < n; ++i) {
      samples.sample(split, i, sample.data());
      const auto from = stream.begin() + starts[i];
      EXPECT_TRUE(std::equal(sample.begin(), sample.end(), from)) << "sample " << i;
    }
    // Every start k x seq_len once: the samples tile the stream, each sharing its last token
    // with the next one's first.
    std::sort(starts.begin(), starts.end());
    for (std::int64_t k = 0; k < n; ++k) EXPECT_EQ(starts[k], k * seq_len);
  }
  // Token ids are unique, so a held-out token in a train sample would show.
  std::set<std::int32_t> held_tokens;
  for (const std::int32_t t : concatenated(samples, Split::held_out)) held_tokens.insert(t);
  std::vector<std::int32_t> sample(static_cast<std::size_t>(samples.sample_tokens()));
  for (std::int64_t i = 0; i < samples.samples(Split::train); ++i) {
    samples.sample(Split::train, i, sample.data());
    for (const std::int32_t t : sample) EXPECT_EQ(held_tokens.count(t), 0u) << "token " << t;
  }
}

TEST(TokenSamples, TheSeedFixesTheOrderAndEachEpochHasItsOwn) {
  test::ScratchDir dir;
  const std::string prefix = write_documents(dir);
  const TokenSamples a = samples_of(prefix, 7), b = samples_of(prefix, 7),
                     c = samples_of(prefix, 8);
  EXPECT_EQ(starts_of_epoch(a, Split::train, 0), starts_of_epoch(b, Split::train, 0));
  EXPECT_EQ(starts_of_epoch(a, Split::train, 3), starts_of_epoch(b, Split::train, 3));
  EXPECT_NE(starts_of_epoch(a, Split::train, 0), starts_of_epoch(a, Split::train, 1));
  EXPECT_NE(starts_of_epoch(a, Split::train, 0), starts_of_epoch(c, Split::train, 0));
  // Going back to an earlier epoch gives its order again (the cache is per epoch).
  const auto first = starts_of_epoch(a, Split::train, 0);
  starts_of_epoch(a, Split::train, 2);
  EXPECT_EQ(starts_of_epoch(a, Split::train, 0), first);
}

TEST(TokenSamples, ASplitTooSmallForOneSampleIsAUserError) {
  test::ScratchDir dir;
  const TokenSamples samples = samples_of(write_documents(dir), 7, 10000);
  EXPECT_EQ(samples.samples(Split::train), 0);
  std::vector<std::int32_t> sample(10001);
  test::expect_contains(
      test::user_error_of([&] { samples.sample(Split::train, 0, sample.data()); }),
      {"train split", "too few for one sample of 10001 tokens"});
}

TEST(DocumentSplit, HoldsOutAtLeastOneAndLeavesAtLeastOne) {
  EXPECT_EQ(split_documents(2, 0.01, 1).held_out.size(), 1u);
  EXPECT_EQ(split_documents(2, 0.99, 1).train.size(), 1u);
  EXPECT_TRUE(split_documents(1, 0.5, 1).held_out.empty());
  EXPECT_TRUE(split_documents(10, 0, 1).held_out.empty());
  test::expect_contains(test::user_error_of([] { split_documents(10, 1, 1); }),
                        {"must be at least 0 and below 1"});
}

TEST(SeededPermutation, IsPinned) {
  // std::mt19937_64 and the Fisher-Yates written out are the same on every platform: these
  // values change only if the shuffle does, which would reorder every run's samples.
  EXPECT_EQ(seeded_permutation(10, 42), (std::vector<std::int64_t>{1, 7, 9, 0, 3, 8, 4, 2, 5, 6}));
}

}  // namespace
}  // namespace meshslice::data
