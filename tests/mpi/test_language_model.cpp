// A language model trained on the mesh against the serial reference (model/reference_lm.hpp) on
// the same token dataset: every step's loss and gradient norm, the held-out loss and the final
// weights (embedding, blocks with RoPE, final gain, head) to 1e-9 in double; a vocabulary that
// does not divide the mesh, tied and untied heads, micro-batches, ZeRO-1, dp and pipeline
// stages (the embedding on the first, the head on the last).
#include <gtest/gtest.h>
#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

#include "data/indexed_dataset_writer.hpp"
#include "data/token_samples.hpp"
#include "exec/real_executor.hpp"
#include "model/reference_lm.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"
#include "test_support.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kVocab = 37;  // prime: padded on every mesh

ModelShape lm_shape(bool tied) {
  ModelShape s;
  s.hidden = 24;
  s.heads = 6;
  s.blocks = 2;
  s.seq_len = 12;
  s.sequences = 8;
  s.rope = true;
  s.vocab = kVocab;
  s.tied_head = tied;
  return s;
}

OptimizerSettings adamw() {
  OptimizerSettings o;
  o.lr = 1e-2;
  o.min_lr = 1e-3;
  o.warmup_steps = 2;
  o.total_steps = 8;
  o.weight_decay = 0.01;
  o.clip_norm = 0.5;
  return o;
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
      data::IndexedDatasetWriter writer(prefix, kVocab);
      for (std::size_t d = 0; d < 40; ++d) {
        std::vector<std::int32_t> doc(5 + (d * 13) % 36);
        for (std::size_t t = 0; t < doc.size(); ++t)
          doc[t] = static_cast<std::int32_t>((d * 31 + t * t * 7 + t) % kVocab);
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
    return data::TokenSamples(data::IndexedDataset(prefix_, kVocab),
                              data::SampleSettings{static_cast<std::int64_t>(seq_len), 0.15, 5});
  }

 private:
  test::ScratchDir dir_;  // rank 0's
  std::string prefix_;
};

// The global batch `batch` of a split: every replica's sequences in order, inputs and targets.
void global_batch(const data::TokenSamples& samples, data::Split split, std::size_t batch,
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

struct Case {
  std::string name;
  bool tied = false;
  std::size_t micro_batches = 1;
  bool zero = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class LanguageModelMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(LanguageModelMatchesReference, StepsHeldOutLossAndFinalWeights) {
  const Case& c = GetParam();
  const int dp = torus().size(Axis::dp), pp = torus().size(Axis::pp);
  if (c.tied && pp > 1) GTEST_SKIP() << "a tied head needs the first and last block together";
  const ModelShape shape = lm_shape(c.tied);
  const OptimizerSettings opt = adamw();
  const TaskSeeds seeds{11, 12, 13};
  StepSettings step;
  step.micro_batches = c.micro_batches;
  step.zero = c.zero;
  const TokenDataset dataset;
  const data::TokenSamples samples = dataset.samples(shape.seq_len);
  RealExecutor<double> ex(torus(), CommOptions{});
  Trainer<RealExecutor<double>> trainer(ex, shape,
                                        default_block_plan(shape, {Algorithm::meshslice, {2, 1}}),
                                        opt, seeds, step, nullptr, &samples);
  ReferenceLm<double> reference(shape, seeds.student);
  const std::size_t sequences = shape.sequences * static_cast<std::size_t>(dp);
  std::vector<int> ids, targets;
  for (std::size_t s = 0; s < 8; ++s) {
    const auto got = trainer.step();
    global_batch(samples, data::Split::train, s, sequences, shape.seq_len, ids, targets);
    const double want = reference.loss_and_gradients(ids, targets);
    const double norm = reference.step(opt, s + 1);
    ASSERT_NEAR(got.loss, want, 1e-9 * want) << c.name << " step " << s + 1;
    ASSERT_NEAR(got.grad_norm, norm, 1e-9 * norm) << c.name << " step " << s + 1;
  }
  double held_out = 0;
  for (std::size_t b = 0; b < 2; ++b) {
    global_batch(samples, data::Split::held_out, b, sequences, shape.seq_len, ids, targets);
    held_out += reference.loss(ids, targets) / 2;
  }
  EXPECT_NEAR(trainer.eval_loss(2), held_out, 1e-9 * held_out) << c.name;
  const auto& student = trainer.student();
  EXPECT_LE(relative_error(student.gather(LmParam::embedding),
                           reference.param(LmParam::embedding)), 1e-9) << c.name;
  EXPECT_LE(relative_error(student.gather(LmParam::final_norm_gain),
                           reference.param(LmParam::final_norm_gain)), 1e-9) << c.name;
  if (!c.tied) {
    EXPECT_LE(relative_error(student.gather(LmParam::lm_head), reference.param(LmParam::lm_head)),
              1e-9) << c.name;
  }
  for (std::size_t b = 0; b < shape.blocks; ++b)
    for (int k = 0; k < kParamKinds; ++k)
      EXPECT_LE(relative_error(student.gather(b, ParamKind(k)),
                               reference.blocks().param(b, ParamKind(k))), 1e-9)
          << c.name << " block " << b << " " << param_kind_name(ParamKind(k));
}

INSTANTIATE_TEST_SUITE_P(Heads, LanguageModelMatchesReference,
                         ::testing::Values(Case{"untied", false, 1, false},
                                           Case{"tied", true, 1, false},
                                           Case{"untied_two_micro_batches_zero", false, 2, true},
                                           Case{"tied_two_micro_batches", true, 2, false}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace meshslice::testing
