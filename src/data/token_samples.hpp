#pragma once
// Training samples from an indexed dataset, the way Megatron's GPT dataset cuts them: the
// documents of a split (data/document_split.hpp) concatenated in order, each ending with the
// end-of-document token its preparer wrote, and cut into samples of seq_len + 1 tokens with
// stride seq_len (a sample's last token is the next one's first: inputs are tokens 0..seq_len-1,
// targets 1..seq_len). A split of N tokens has (N - 1) / seq_len samples; the tail that fills no
// sample is left out.
//
// Samples are addressed by a global index that counts on across epochs: index i is sample
// permutation_e[i mod samples] of epoch e = i / samples, with a seeded permutation per epoch and
// split (data/seeded_permutation.hpp), the same on every rank and run. sample() reads only that
// sample's tokens from the mapped file, so a rank reads just the sequences it trains on.
//
// Not thread-safe: the current epoch's permutation is cached per split.
#include <cstdint>
#include <vector>

#include "data/document_split.hpp"
#include "data/indexed_dataset.hpp"

namespace meshslice::data {

enum class Split { train, held_out };

struct SampleSettings {
  std::int64_t seq_len = 0;
  double held_out_fraction = 0;
  std::uint64_t seed = 0;
};

class TokenSamples {
 public:
  TokenSamples(IndexedDataset dataset, const SampleSettings& settings);

  const IndexedDataset& dataset() const { return dataset_; }
  std::int64_t sample_tokens() const { return seq_len_ + 1; }
  const std::vector<std::int64_t>& documents(Split split) const { return part(split).documents; }
  std::int64_t tokens(Split split) const { return part(split).starts.back(); }
  std::int64_t samples(Split split) const;

  // Where sample `global_index` starts in its split's concatenated tokens.
  std::int64_t sample_start(Split split, std::int64_t global_index) const;
  // Copies sample `global_index`'s sample_tokens() tokens to `out`. A UserError when the split
  // has no sample (fewer than seq_len + 1 tokens).
  void sample(Split split, std::int64_t global_index, std::int32_t* out) const;

 private:
  struct Part {
    std::vector<std::int64_t> documents;
    std::vector<std::int64_t> starts;  // token offset of each document, then the total
    mutable std::int64_t epoch = -1;
    mutable std::vector<std::int64_t> order;  // the cached epoch's permutation
  };
  const Part& part(Split split) const { return split == Split::train ? train_ : held_out_; }
  Part make_part(std::vector<std::int64_t> documents) const;

  IndexedDataset dataset_;
  std::int64_t seq_len_;
  std::uint64_t seed_;
  Part train_, held_out_;
};

}  // namespace meshslice::data
