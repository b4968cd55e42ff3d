// A language model's vocabulary-sized ends on the mesh (model/vocab_parallel.hpp) against the
// serial reference (model/reference_lm.hpp) on the same global tensors: the embedding's lookup
// and its table gradient accumulated over two micro-batches, and the cross-entropy's loss and
// logit gradient over a vocabulary that does not divide the mesh (the padding must never be
// predicted: its logits are made the largest, and its gradients must be zero).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/errors.hpp"
#include "exec/real_executor.hpp"
#include "gemm_reference.hpp"
#include "model/reference_lm.hpp"
#include "model/vocab_parallel.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kTokens = 24, kHidden = 12, kVocab = 37;  // a prime vocabulary

std::size_t mesh_rows() { return static_cast<std::size_t>(torus().size(Axis::row)); }
std::size_t mesh_cols() { return static_cast<std::size_t>(torus().size(Axis::col)); }

std::size_t mesh_multiple() {
  return std::lcm(static_cast<std::size_t>(torus().size(Axis::row)),
                  static_cast<std::size_t>(torus().size(Axis::col)));
}

// The vocabulary padded to a multiple of `granule` times the mesh's extents.
VocabSplit vocab_split(std::size_t granule) {
  return split_vocab(kVocab, padded_vocab(kVocab, granule * mesh_multiple()), mesh_rows(),
                     mesh_cols());
}

// Micro-batch `k`'s ids (repeats, the first and last id among them) and next tokens.
std::vector<int> ids_of(int k) {
  std::vector<int> ids(kTokens);
  for (std::size_t t = 0; t < kTokens; ++t)
    ids[t] = static_cast<int>((t % 7) * 6 + (t + static_cast<std::size_t>(k)) % 2) % int(kVocab);
  ids[3] = kVocab - 1;
  return ids;
}
std::vector<int> targets_of(int k) {
  std::vector<int> targets(kTokens);
  for (std::size_t t = 0; t < kTokens; ++t)
    targets[t] = static_cast<int>((t * 11 + static_cast<std::size_t>(k) * 5 + 3) % kVocab);
  return targets;
}

// This chip's mesh row's part of a replica's per-token values.
std::vector<int> my_rows(const std::vector<int>& all) {
  const std::size_t rows = all.size() / static_cast<std::size_t>(torus().size(Axis::row));
  const auto first = all.begin() + static_cast<std::ptrdiff_t>(
                                       rows * static_cast<std::size_t>(torus().coord(Axis::row)));
  return {first, first + static_cast<std::ptrdiff_t>(rows)};
}

// The real vocabulary's columns of a T x V_p matrix.
std::vector<double> unpadded(const GlobalMatrix& g, std::size_t vocab) {
  std::vector<double> out;
  for (std::size_t t = 0; t < g.shape.rows; ++t)
    for (std::size_t v = 0; v < vocab; ++v) out.push_back(g(t, v));
  return out;
}

class VocabParallel : public ::testing::TestWithParam<std::size_t> {};  // padding granules

TEST_P(VocabParallel, CrossEntropyMatchesSerial) {
  const VocabSplit vocab = vocab_split(GetParam());
  // Logits in [-3, 3]; the padding's 50, which a softmax that counted it would be all about.
  GlobalMatrix logits = global_matrix({kTokens, vocab.padded}, 7, 0, 1.0 / 16);
  for (std::size_t t = 0; t < kTokens; ++t)
    for (std::size_t v = kVocab; v < vocab.padded; ++v) logits.values[t * vocab.padded + v] = 50;
  const std::vector<int> targets = targets_of(0);
  const double scale = 1.0 / kTokens;
  std::vector<double> dlogits;
  reference_cross_entropy(unpadded(logits, kVocab), kVocab, targets, scale, dlogits);
  GlobalMatrix want{{kTokens, vocab.padded}, std::vector<double>(kTokens * vocab.padded, 0.0)};
  for (std::size_t t = 0; t < kTokens; ++t)
    for (std::size_t v = 0; v < kVocab; ++v)
      want.values[t * vocab.padded + v] = dlogits[t * kVocab + v];
  // The loss of this chip's tokens alone.
  const std::size_t rows = kTokens / static_cast<std::size_t>(torus().size(Axis::row));
  const std::size_t first_row = rows * static_cast<std::size_t>(torus().coord(Axis::row));
  const std::vector<double> all = unpadded(logits, kVocab);
  std::vector<double> ignored;
  const std::vector<double> mine(all.begin() + static_cast<std::ptrdiff_t>(first_row * kVocab),
                                 all.begin() +
                                     static_cast<std::ptrdiff_t>((first_row + rows) * kVocab));
  const double want_loss = reference_cross_entropy(mine, kVocab, my_rows(targets), scale, ignored);

  RealExecutor<double> ex(torus(), CommOptions{});
  const TokenBatch batch = make_token_batch(torus(), vocab, my_rows(ids_of(0)), my_rows(targets));
  VocabCrossEntropy<RealExecutor<double>> loss(ex, vocab, rows);
  const Matrix<double> shard = block(logits);
  const double got_loss = loss.loss_and_gradient(shard, batch.targets, scale);
  EXPECT_LE(std::abs(got_loss - want_loss), 1e-12 * std::abs(want_loss));
  EXPECT_LE(worst_error(shard, want), 1e-12);
  // Again, the logits restored: the buffers hold nothing over from the call before.
  const Matrix<double> again = block(logits);
  EXPECT_EQ(loss.loss_and_gradient(again, batch.targets, scale), got_loss);
}

TEST_P(VocabParallel, CrossEntropyInFloat) {
  const VocabSplit vocab = vocab_split(GetParam());
  const GlobalMatrix logits = global_matrix({kTokens, vocab.padded}, 8, 0, 1.0 / 16);
  const std::vector<int> targets = targets_of(1);
  std::vector<double> dlogits;
  const double want_total =
      reference_cross_entropy(unpadded(logits, kVocab), kVocab, targets, 1.0, dlogits);
  RealExecutor<float> ex(torus(), CommOptions{});
  const TokenBatch batch = make_token_batch(torus(), vocab, my_rows(ids_of(1)), my_rows(targets));
  const std::size_t rows = kTokens / static_cast<std::size_t>(torus().size(Axis::row));
  VocabCrossEntropy<RealExecutor<float>> loss(ex, vocab, rows);
  const Matrix<double> wide = block(logits);
  Matrix<float> shard("logits", wide.extent(0), wide.extent(1));
  const auto host = to_host(wide);
  auto narrow = Kokkos::create_mirror_view(shard);
  for (std::size_t i = 0; i < wide.extent(0); ++i)
    for (std::size_t j = 0; j < wide.extent(1); ++j) narrow(i, j) = static_cast<float>(host(i, j));
  Kokkos::deep_copy(shard, narrow);
  double total = loss.loss_and_gradient(shard, batch.targets, 1.0);
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, torus().axis(Axis::row).comm());
  EXPECT_LE(std::abs(total - want_total), 1e-5 * want_total);
}

TEST_P(VocabParallel, EmbeddingMatchesSerial) {
  const VocabSplit vocab = vocab_split(GetParam());
  const GlobalMatrix table = global_matrix({vocab.padded, kHidden}, 9, 0, 1.0 / 16);
  RealExecutor<double> ex(torus(), CommOptions{});
  TokenEmbedding<RealExecutor<double>> embedding(ex, vocab, kHidden, kTokens);
  const Matrix<double> table_shard = block(table);
  Matrix<double> dtable("dtable", table_shard.extent(0), table_shard.extent(1));
  GlobalMatrix dtable_want{{vocab.padded, kHidden}, std::vector<double>(vocab.padded * kHidden)};
  const std::size_t rows = kTokens / static_cast<std::size_t>(torus().size(Axis::row));
  for (int k = 0; k < 2; ++k) {
    const std::vector<int> ids = ids_of(k);
    const TokenBatch batch = make_token_batch(torus(), vocab, my_rows(ids), my_rows(targets_of(k)));
    Matrix<double> x("x", rows, kHidden / static_cast<std::size_t>(torus().size(Axis::col)));
    embedding.forward(batch, table_shard, x);
    EXPECT_LE(worst_error(x, {{kTokens, kHidden}, reference_embedding(table.values, kHidden, ids)}),
              0.0)
        << "micro-batch " << k;
    const GlobalMatrix dx = global_matrix({kTokens, kHidden}, 10, static_cast<std::uint64_t>(k));
    embedding.backward(batch, block(dx), dtable, /*accumulate=*/k > 0);
    reference_embedding_gradient(dx.values, kHidden, ids, dtable_want.values);
    EXPECT_LE(worst_error(dtable, dtable_want), 1e-15) << "micro-batch " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Padding, VocabParallel, ::testing::Values(1, 16),
                         [](const auto& info) { return "granule" + std::to_string(info.param); });

TEST(VocabSplit, PaddingThatDoesNotDivideTheMeshIsAnError) {
  EXPECT_EQ(padded_vocab(37, 8), 40u);
  EXPECT_EQ(padded_vocab(40, 8), 40u);
  EXPECT_THROW(split_vocab(41, 40, mesh_rows(), mesh_cols()), UserError);
  if (mesh_multiple() > 1) {
    EXPECT_THROW(split_vocab(kVocab, kVocab, mesh_rows(), mesh_cols()), UserError);
  }
  const VocabSplit split = vocab_split(16);
  std::size_t valid = 0;
  for (std::size_t col = 0; col < split.mesh_cols; ++col) valid += split.valid_logits(col);
  EXPECT_EQ(valid, 37u);
}

TEST(VocabSplit, AnIdOutsideTheVocabularyIsAnError) {
  const VocabSplit vocab = vocab_split(1);
  std::vector<int> ids = my_rows(ids_of(0));
  ids[0] = kVocab;
  EXPECT_THROW(make_token_batch(torus(), vocab, my_rows(ids_of(0)), ids), UserError);
}

}  // namespace
}  // namespace meshslice::testing
