#include "model/vocab_parallel.hpp"

#include <string>

#include "comm/host_collectives.hpp"
#include "core/errors.hpp"

namespace meshslice {

namespace {

// A host vector of ints on the device.
TokenIds to_device(const char* label, const std::vector<int>& values) {
  TokenIds device(std::string(label), values.size());
  const Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(values.data(),
                                                                                  values.size());
  Kokkos::deep_copy(device, host);
  return device;
}

void require_ids(const std::vector<int>& ids, std::size_t vocab, const char* what) {
  for (std::size_t t = 0; t < ids.size(); ++t)
    require(ids[t] >= 0 && static_cast<std::size_t>(ids[t]) < vocab, what, " ", t, " is ", ids[t],
            ", not an id of the vocabulary of ", vocab, " (model.vocab)");
}

}  // namespace

std::size_t VocabSplit::valid_logits(std::size_t col) const {
  const std::size_t first = logit_first(col);
  if (first >= vocab) return 0;
  return std::min(logit_cols(), vocab - first);
}

VocabSplit split_vocab(std::size_t vocab, std::size_t padded, std::size_t mesh_rows,
                       std::size_t mesh_cols) {
  VocabSplit split;
  split.vocab = vocab;
  split.padded = padded;
  split.mesh_rows = mesh_rows;
  split.mesh_cols = mesh_cols;
  require(vocab > 0 && vocab <= padded, "a vocabulary of ", vocab, " padded to ", padded,
          ": the padded size must be at least the vocabulary");
  require(padded % split.mesh_rows == 0 && padded % split.mesh_cols == 0, "the padded vocabulary (",
          padded, ") must divide over the mesh's ", split.mesh_rows, " rows and ", split.mesh_cols,
          " columns");
  return split;
}

VocabSplit model_vocab(std::size_t vocab, std::size_t mesh_rows, std::size_t mesh_cols) {
  return split_vocab(vocab, mesh_padded_vocab(vocab, mesh_rows, mesh_cols), mesh_rows, mesh_cols);
}

TokenBatch make_token_batch(const Torus& torus, const VocabSplit& vocab,
                            const std::vector<int>& row_ids, const std::vector<int>& row_targets) {
  require(row_ids.size() == row_targets.size(), "a micro-batch of ", row_ids.size(),
          " tokens with ", row_targets.size(), " targets");
  require_ids(row_ids, vocab.vocab, "token");
  require_ids(row_targets, vocab.vocab, "target");
  const std::vector<int> ids = all_gather_over(torus.axis(Axis::row), row_ids);
  // This chip's table rows' tokens, grouped by id in batch order (a counting sort).
  const std::size_t rows = vocab.table_rows();
  const std::size_t first = vocab.table_first(static_cast<std::size_t>(torus.coord(Axis::row)));
  std::vector<int> offsets(rows + 1, 0), positions;
  for (int id : ids) {
    const std::size_t v = static_cast<std::size_t>(id);
    if (v >= first && v < first + rows) ++offsets[v - first + 1];
  }
  for (std::size_t v = 0; v < rows; ++v) offsets[v + 1] += offsets[v];
  positions.resize(static_cast<std::size_t>(offsets[rows]));
  std::vector<int> next(offsets.begin(), offsets.end() - 1);
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const std::size_t v = static_cast<std::size_t>(ids[t]);
    if (v >= first && v < first + rows)
      positions[static_cast<std::size_t>(next[v - first]++)] = static_cast<int>(t);
  }
  TokenBatch batch;
  batch.ids = to_device("token_ids", ids);
  batch.by_id.offsets = to_device("tokens_by_id_offsets", offsets);
  batch.by_id.positions = to_device("tokens_by_id", positions);
  batch.targets = to_device("token_targets", row_targets);
  return batch;
}

}  // namespace meshslice
