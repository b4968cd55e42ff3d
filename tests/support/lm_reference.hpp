#pragma once
// The language-model tests' serial reference checks (tests/mpi/test_language_model.cpp,
// test_checkpoint.cpp): a token dataset written by rank 0 where every rank reads it, the global
// batches the serial reference (model/reference_lm.hpp) trains on, in the order the distributed
// Trainer reads them, and the comparisons of steps and weights.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data/indexed_dataset_writer.hpp"
#include "data/token_samples.hpp"
#include "model/block_layers.hpp"
#include "model/reference_lm.hpp"
#include "model/transformer.hpp"
#include "reference_check.hpp"
#include "test_support.hpp"

namespace meshslice::testing {

constexpr std::size_t kTokenVocab = 37;  // prime: padded on every mesh

// The tests' model as a language model: RoPE and the token dataset's vocabulary.
inline ModelShape test_lm_shape(std::size_t sequences, bool tied) {
  ModelShape s = test_block_shape(sequences);
  s.rope = true;
  s.vocab = kTokenVocab;
  s.tied_head = tied;
  return s;
}

// Documents of 5 to 40 tokens written by rank 0 into a directory every rank sees; the dataset
// every test reads.
class TokenDataset {
 public:
  TokenDataset() {
    std::string prefix = (dir_.path() / "tokens").string();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      data::IndexedDatasetWriter writer(prefix, kTokenVocab);
      for (std::size_t d = 0; d < 40; ++d) {
        std::vector<std::int32_t> doc(5 + (d * 13) % 36);
        for (std::size_t t = 0; t < doc.size(); ++t)
          doc[t] = static_cast<std::int32_t>((d * 31 + t * t * 7 + t) % kTokenVocab);
        writer.add_document(doc);
      }
      writer.finish();
    }
    int length = static_cast<int>(prefix.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    prefix.resize(static_cast<std::size_t>(length));
    MPI_Bcast(prefix.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    prefix_ = prefix;
  }
  ~TokenDataset() { MPI_Barrier(MPI_COMM_WORLD); }  // before rank 0 removes the files
  data::TokenSamples samples(std::size_t seq_len) const {
    return data::TokenSamples(data::IndexedDataset(prefix_, kTokenVocab),
                              data::SampleSettings{static_cast<std::int64_t>(seq_len), 0.15, 5});
  }

 private:
  test::ScratchDir dir_;  // rank 0's
  std::string prefix_;
};

// The global batch `batch` of a split: every replica's sequences in order, inputs and targets.
inline void global_batch(const data::TokenSamples& samples, data::Split split, std::size_t batch,
                         std::size_t sequences, std::size_t len, std::vector<int>& ids,
                         std::vector<int>& targets) {
  ids.clear();
  targets.clear();
  std::vector<std::int32_t> sample(len + 1);
  for (std::size_t g = 0; g < sequences; ++g) {
    samples.sample(split, static_cast<std::int64_t>(batch * sequences + g), sample.data());
    ids.insert(ids.end(), sample.begin(), sample.end() - 1);
    targets.insert(targets.end(), sample.begin() + 1, sample.end());
  }
}

// Steps first + 1 .. first + steps of `trainer` against the reference's (which trains on the
// same global batches of `sequences` sequences): losses and gradient norms to 1e-9.
template <class Trainer>
void expect_lm_steps(Trainer& trainer, ReferenceLm<double>& reference,
                     const data::TokenSamples& samples, const OptimizerSettings& optimizer,
                     std::size_t sequences, std::size_t first, std::size_t steps,
                     const std::string& name) {
  std::vector<int> ids, targets;
  for (std::size_t s = first; s < first + steps; ++s) {
    const auto got = trainer.step();
    global_batch(samples, data::Split::train, s, sequences, reference.shape().seq_len, ids,
                 targets);
    const double want = reference.loss_and_gradients(ids, targets);
    const double norm = reference.step(optimizer, s + 1);
    ASSERT_NEAR(got.loss, want, 1e-9 * want) << name << " step " << s + 1;
    ASSERT_NEAR(got.grad_norm, norm, 1e-9 * norm) << name << " step " << s + 1;
  }
}

// Every weight of the distributed model against the reference's, to 1e-9.
template <class Exec>
void expect_lm_weights(const Transformer<Exec>& student, ReferenceLm<double>& reference,
                       const std::string& name) {
  std::vector<LmParam> params{LmParam::embedding, LmParam::final_norm_gain};
  if (!reference.shape().tied_head) params.push_back(LmParam::lm_head);
  for (LmParam p : params)
    EXPECT_LE(relative_error(student.gather(p), reference.param(p)), 1e-9)
        << name << " " << lm_parameter_name(p);
  for (std::size_t b = 0; b < reference.shape().blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_LE(relative_error(student.gather(b, kind), reference.blocks().param(b, kind)), 1e-9)
          << name << " block " << b << " " << param_kind_name(kind);
}

}  // namespace meshslice::testing
