#include "data/token_samples.hpp"

#include <algorithm>
#include <utility>

#include "core/errors.hpp"
#include "data/seeded_permutation.hpp"

namespace meshslice::data {

namespace {

const char* split_name(Split split) { return split == Split::train ? "train" : "held-out"; }

// Streams of the seed (data/seeded_permutation.hpp): 0 shuffles documents, then two per epoch.
std::uint64_t epoch_stream(Split split, std::int64_t epoch) {
  return 1 + 2 * static_cast<std::uint64_t>(epoch) + (split == Split::train ? 0 : 1);
}

}  // namespace

TokenSamples::TokenSamples(IndexedDataset dataset, const SampleSettings& settings)
    : dataset_(std::move(dataset)), seq_len_(settings.seq_len), seed_(settings.seed) {
  require(seq_len_ >= 1, "the sequence length ", seq_len_, " must be at least 1");
  DocumentSplit split =
      split_documents(dataset_.document_count(), settings.held_out_fraction, settings.seed);
  train_ = make_part(std::move(split.train));
  held_out_ = make_part(std::move(split.held_out));
}

TokenSamples::Part TokenSamples::make_part(std::vector<std::int64_t> documents) const {
  Part part;
  part.starts.reserve(documents.size() + 1);
  std::int64_t offset = 0;
  for (const std::int64_t d : documents) {
    part.starts.push_back(offset);
    offset += dataset_.document_length(d);
  }
  part.starts.push_back(offset);
  part.documents = std::move(documents);
  return part;
}

std::int64_t TokenSamples::samples(Split split) const {
  const std::int64_t n = tokens(split);
  return n > seq_len_ ? (n - 1) / seq_len_ : 0;
}

std::int64_t TokenSamples::sample_start(Split split, std::int64_t global_index) const {
  const std::int64_t count = samples(split);
  require(count > 0, "the ", split_name(split), " split of ", dataset_.bin_path(), " holds ",
          tokens(split), " tokens in ", documents(split).size(),
          " documents, too few for one sample of ", seq_len_ + 1,
          " tokens: use more text, a shorter sequence or another held-out fraction");
  MESHSLICE_ASSERT(global_index >= 0, "sample index ", global_index);
  const Part& p = part(split);
  const std::int64_t epoch = global_index / count;
  if (p.epoch != epoch) {
    p.order = seeded_permutation(count, stream_seed(seed_, epoch_stream(split, epoch)));
    p.epoch = epoch;
  }
  return p.order[static_cast<std::size_t>(global_index % count)] * seq_len_;
}

void TokenSamples::sample(Split split, std::int64_t global_index, std::int32_t* out) const {
  const Part& p = part(split);
  std::int64_t position = sample_start(split, global_index);
  std::int64_t wanted = seq_len_ + 1;
  // The document holding `position`: the last one starting at or before it.
  auto document = std::upper_bound(p.starts.begin(), p.starts.end() - 1, position) - 1;
  while (wanted > 0) {
    const auto k = static_cast<std::size_t>(document - p.starts.begin());
    const std::int64_t offset = position - *document;
    const std::int64_t taken = std::min(wanted, *(document + 1) - position);
    // An empty document takes nothing: the walk goes on to the next.
    if (taken > 0) dataset_.read(p.documents[k], offset, taken, out);
    out += taken;
    position += taken;
    wanted -= taken;
    ++document;
  }
}

}  // namespace meshslice::data
