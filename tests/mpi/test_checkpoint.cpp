// Checkpoints (checkpoint/checkpoint.hpp) on 4 ranks, every layout built from the same world:
// a run saved on one layout and resumed on another (mesh shape, dp, pp with 1F1B, ZeRO-1, a
// transposed plan and other algorithms) goes on exactly as the serial reference's straight run
// (1e-9, double); resumed on its own layout it is bit-identical to the straight run (float and
// double); damaged, truncated, incomplete or mismatched checkpoints are one clear error on every
// rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_reader.hpp"
#include "checkpoint/safetensors.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "exec/local_gemm_bf16.hpp"
#include "exec/real_executor.hpp"
#include "model/block_layers.hpp"
#include "model/model_shape_record.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"
#include "lm_reference.hpp"
#include "reference_check.hpp"
#include "test_support.hpp"

namespace meshslice::testing {
namespace {

namespace fs = std::filesystem;

// The tests' model with 4 sequences per step over the replicas: every layout of 4 ranks below
// splits it.
ModelShape shape_for(int dp) {
  return test_block_shape(4 / static_cast<std::size_t>(dp));  // the same global batch
}

OptimizerSettings adamw() { return test_adamw(3, 20); }

const TaskSeeds kSeeds{11, 12, 13};

GemmChoice choice(Algorithm a, int slices) { return GemmChoice{a, {slices, 1}}; }

// One way to run the model on the 4 ranks.
struct RunLayout {
  std::string name;
  MeshShape mesh;
  ModelPlan plan;
  StepSettings step;
};

ModelPlan default_plan(Algorithm a = Algorithm::meshslice, int slices = 2) {
  return default_model_plan(shape_for(1), choice(a, slices));
}

// Every FC layer transposed or W- or X-stationary, with another algorithm than the default's.
ModelPlan transposed_plan() { return with_transposed_layers(default_plan(Algorithm::summa, 2)); }

StepSettings pipeline(std::size_t micro_batches, bool zero = false) {
  StepSettings s;
  s.schedule = PipelineSchedule::one_f_one_b;
  s.micro_batches = micro_batches;
  s.zero = zero;
  return s;
}

// The language model of the same size with RoPE, a vocabulary that pads on every layout and
// 8 sequences per step (micro-batches of whole sequences on every mesh row).
// With `mlp` swiglu, Llama's block: its MLP of width 72 (FF1's gate and up grouped as each
// layout splits FF1's output: by mesh columns or rows) and grouped-query attention (6 query
// heads, 2 key and value heads).
ModelShape lm_shape_for(int dp, bool tied, MlpKind mlp = MlpKind::gelu) {
  ModelShape s = test_lm_shape(8 / static_cast<std::size_t>(dp), tied);
  s.mlp = mlp;
  s.ffn_hidden = mlp == MlpKind::swiglu ? 72 : 0;
  s.kv_heads = mlp == MlpKind::swiglu ? 2 : 0;
  return s;
}

// A layout's plan for a model of `shape`: a head (the layout's, or the default with the first
// layer's GEMMs) when it has a vocabulary, none otherwise.
ModelPlan plan_for(const RunLayout& l, const ModelShape& shape) {
  ModelPlan plan = l.plan;
  if (shape.vocab == 0)
    plan.lm_head.reset();
  else if (!plan.lm_head || (shape.tied_head && plan.lm_head->stationary != Stationary::X))
    plan.lm_head = default_model_plan(shape, plan[0].gemms[0]).lm_head;
  return plan;
}

// train.precision float (or double), or bf16: the GEMMs round their operands, the checkpoints
// say bf16.
enum class Gemms { unrounded, bf16 };

// A trainer of one layout, with the executor and torus it runs on; a language model's when
// given its token samples.
template <class T>
struct LayoutRun {
  explicit LayoutRun(const RunLayout& l, const OptimizerSettings& o = adamw(),
                     const data::TokenSamples* samples = nullptr, bool tied = false,
                     MlpKind mlp = MlpKind::gelu, Gemms gemms = Gemms::unrounded)
      : layout(l),
        shape(samples ? lm_shape_for(l.mesh.dp, tied, mlp) : shape_for(l.mesh.dp)),
        torus(MPI_COMM_WORLD, l.mesh),
        ex(torus, CommOptions{}),
        trainer(executor_for(gemms), shape, plan_for(l, shape), o, kSeeds, l.step, nullptr,
                samples) {}
  LayoutRun(const RunLayout& l, Gemms gemms)
      : LayoutRun(l, adamw(), nullptr, false, MlpKind::gelu, gemms) {}
  // The executor, its GEMMs set up before the trainer makes its plans.
  RealExecutor<T>& executor_for(Gemms gemms) {
    if (gemms == Gemms::bf16) {
      ex.round_gemm_operands_to_bf16(fastest_bf16_route());
      precision = "bf16";
    }
    return ex;
  }
  CheckpointFacts facts() {
    CheckpointFacts f;
    f.step = trainer.steps_done();
    f.model = model_shape_json(shape);
    f.precision = precision;
    f.seeds = kSeeds;
    f.layout = layout.name;
    f.optimizer = trainer.student().optimizer().kind();
    return f;
  }
  std::string save(const std::string& dir) {
    return save_checkpoint(dir, 0, torus, trainer.student().parameters(),
                           trainer.student().optimizer(), facts());
  }
  // Loads as a run with `run`'s facts and model shape `deck` (default: this run's) would.
  void load(const std::string& path) { load(path, facts(), shape); }
  void load(const std::string& path, const CheckpointFacts& run, const ModelShape& deck) {
    const auto fits = [&](const std::string& at, const json::Value& saved) {
      require_resumable(at, saved, deck);
    };
    const CheckpointFacts saved = load_checkpoint(path, torus, trainer.student().parameters(),
                                                  trainer.student().optimizer(), run, fits);
    trainer.resume_at(saved.step);
  }
  RunLayout layout;
  std::string precision = sizeof(T) == 8 ? "double" : "float";
  ModelShape shape;
  Torus torus;
  RealExecutor<T> ex;
  Trainer<RealExecutor<T>> trainer;
};

// A fresh directory every rank sees (rank 0 makes it), removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string made(256, '\0');
    if (rank == 0) {
      std::string pattern = (fs::temp_directory_path() / "meshslice-ckpt-XXXXXX").string();
      made = mkdtemp(pattern.data());
      made.resize(256, '\0');
    }
    MPI_Bcast(made.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = made.c_str();
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && !std::getenv("KEEP_CKPT")) fs::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool four_ranks() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size == 4;
}

const RunLayout kSquare{"2x2", {1, 1, 2, 2}, default_plan(), {}};

std::vector<RunLayout> other_layouts() {
  return {
      {"dp2_1x2", {2, 1, 1, 2}, default_plan(), {}},
      {"pp2_2x1_1f1b", {1, 2, 2, 1}, default_plan(), pipeline(2)},
      {"dp2_1x2_zero", {2, 1, 1, 2}, default_plan(Algorithm::collective, 1), pipeline(1, true)},
      {"2x2_transposed_summa", {1, 1, 2, 2}, transposed_plan(), {}},
      {"4x1_wang", {1, 1, 4, 1}, default_plan(Algorithm::wang, 1), {}},
      {"dp4", {4, 1, 1, 1}, default_plan(), pipeline(1, true)},
  };
}

// Saved after 10 steps on 2x2, resumed on each other layout: the next 10 steps, the evaluation
// and the final weights are the reference's straight 20 steps (1e-9).
TEST(Checkpoint, ResumesOnAnotherLayoutAsTheStraightRun) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  TempDir dir;
  ReferenceTrainer<double> reference(shape_for(1), kSeeds, adamw());
  std::string path;
  {
    LayoutRun<double> saving(kSquare);
    expect_matches_reference(saving.trainer, reference, saving.shape, 1, 10, "before saving");
    path = saving.save(dir.path());
  }
  for (const RunLayout& layout : other_layouts()) {
    ReferenceTrainer<double> straight = reference;
    LayoutRun<double> resumed(layout);
    resumed.load(find_checkpoint(path, dir.path(), MPI_COMM_WORLD));
    expect_matches_reference(resumed.trainer, straight, resumed.shape, layout.mesh.dp, 10,
                             "resumed on " + layout.name);
  }
}

// A language model (its embedding and head padded differently on each mesh, tied or not; with a
// SwiGLU MLP): saved after 4 steps on 2x2, resumed on the other layouts, the next 4 steps and the
// final weights are the serial reference's straight 8 steps (1e-9).
TEST(Checkpoint, LanguageModelResumesOnAnotherLayout) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  const TokenDataset dataset;
  const data::TokenSamples samples = dataset.samples(shape_for(1).seq_len);
  for (const auto& [tied, mlp] : {std::pair{false, MlpKind::gelu}, std::pair{true, MlpKind::gelu},
                                  std::pair{false, MlpKind::swiglu}}) {
    TempDir dir;
    const std::string head = concat(tied ? "tied " : "untied ", mlp_name(mlp), " ");
    ReferenceLm<double> reference(lm_shape_for(1, tied, mlp), kSeeds.student);
    std::string path;
    {
      LayoutRun<double> saving(kSquare, adamw(), &samples, tied, mlp);
      expect_lm_steps(saving.trainer, reference, samples, adamw(), 8, 0, 4, head + "before saving");
      path = saving.save(dir.path());
    }
    for (const RunLayout& layout : other_layouts()) {
      if (tied && layout.mesh.pp > 1) continue;  // a tied head needs both ends on one stage
      ReferenceLm<double> straight = reference;
      LayoutRun<double> resumed(layout, adamw(), &samples, tied, mlp);
      resumed.load(find_checkpoint(path, dir.path(), MPI_COMM_WORLD));
      expect_lm_steps(resumed.trainer, straight, samples, adamw(), 8, 4, 4,
                      head + "resumed on " + layout.name);
      expect_lm_weights(resumed.trainer.student(), straight, head + layout.name);
    }
  }
}

// The other way round: saved by ZeRO-1 replicas (each writes its row of the optimizer state)
// and by pipeline stages, resumed on 2x2.
TEST(Checkpoint, SavedByZeroReplicasAndStagesResumesOn2x2) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  for (const RunLayout& saving_layout : {other_layouts()[2], other_layouts()[1]}) {
    TempDir dir;
    ReferenceTrainer<double> reference(shape_for(1), kSeeds, adamw());
    std::string path;
    {
      LayoutRun<double> saving(saving_layout);
      expect_matches_reference(saving.trainer, reference, saving.shape, saving_layout.mesh.dp, 10,
                               "saving on " + saving_layout.name);
      path = saving.save(dir.path());
    }
    LayoutRun<double> resumed(kSquare);
    resumed.load(find_checkpoint("auto", dir.path(), MPI_COMM_WORLD));
    expect_matches_reference(resumed.trainer, reference, resumed.shape, 1, 10,
                             "saved on " + saving_layout.name);
  }
}

// Lion (one state tensor, not AdamW's two), Adafactor (a matrix's factors whole on every chip,
// a gain's moment split as the gain) and NAdamW (its momentum schedule's product made again
// from the step) saved by ZeRO-1 replicas, resumed on 2x2, 2x2 with W^T storage (Adafactor's row
// factor then along the shard's columns), 4x1 and two stages: the next 10 steps are the
// reference's straight run (1e-9).
TEST(Checkpoint, EachOptimizersStateResumesOnAnotherLayout) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  for (const char* name : {"lion", "adafactor", "nadamw"}) {
    OptimizerSettings o = adamw();
    o.kind = parse_optimizer(name);
    o.lr = o.kind == parse_optimizer("lion") ? 1e-3 : 1e-2;
    TempDir dir;
    ReferenceTrainer<double> reference(shape_for(1), kSeeds, o);
    std::string path;
    {
      LayoutRun<double> saving(other_layouts()[2], o);
      expect_matches_reference(saving.trainer, reference, saving.shape, 2, 10,
                               concat(name, " saving"));
      path = saving.save(dir.path());
    }
    for (const RunLayout& layout :
         {kSquare, other_layouts()[3], other_layouts()[4], other_layouts()[1]}) {
      ReferenceTrainer<double> straight = reference;
      LayoutRun<double> resumed(layout, o);
      resumed.load(find_checkpoint(path, dir.path(), MPI_COMM_WORLD));
      expect_matches_reference(resumed.trainer, straight, resumed.shape, layout.mesh.dp, 10,
                               concat(name, " resumed on ", layout.name));
    }
  }
}

// 20 steps straight against 10, save, a fresh trainer resuming, 10 more: the same losses,
// gradient norms and final weights, bit for bit.
template <class T>
void expect_bit_identical_resume(const RunLayout& layout, bool bf16 = false) {
  TempDir dir;
  const Gemms gemms = bf16 ? Gemms::bf16 : Gemms::unrounded;
  LayoutRun<T> straight(layout, gemms);
  {
    LayoutRun<T> first(layout, gemms);
    expect_identical_steps(straight.trainer, first.trainer, 10);
    first.save(dir.path());
  }
  LayoutRun<T> resumed(layout, gemms);
  resumed.load(find_checkpoint("auto", dir.path(), MPI_COMM_WORLD));
  expect_identical_steps(straight.trainer, resumed.trainer, 10);
  EXPECT_EQ(straight.trainer.eval_loss(1), resumed.trainer.eval_loss(1)) << layout.name;
  for (std::size_t b = 0; b < straight.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(straight.trainer.student().gather(b, kind),
                resumed.trainer.student().gather(b, kind))
          << layout.name << " " << parameter_name(b, kind);
}

TEST(Checkpoint, ResumingOnTheSameLayoutIsBitIdentical) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  for (const RunLayout& layout : {other_layouts()[0], other_layouts()[1]}) {
    expect_bit_identical_resume<float>(layout);
    expect_bit_identical_resume<double>(layout);
    expect_bit_identical_resume<float>(layout, true);  // bf16: from the fp32 master weights
  }
  expect_bit_identical_resume<float>(other_layouts()[5], true);  // ZeRO-1's rows of the masters
}

void expect_bf16_masters_resume(const RunLayout& bf16_layout) {
  TempDir dir;
  LayoutRun<float> bf16_run(bf16_layout, Gemms::bf16);
  EXPECT_EQ(sharded_masters(bf16_run.trainer.student().parameters()) > 0, bf16_layout.mesh.dp > 1)
      << "the masters sharded over dp";
  for (int step = 0; step < 3; ++step) bf16_run.trainer.step();
  const std::string path = bf16_run.save(dir.path() + "/bf16");
  const SerialCheckpoint file = read_checkpoint_serially(path);
  EXPECT_EQ(file.precision, "bf16");
  std::size_t rounded_apart = 0;
  for (std::size_t b = 0; b < bf16_run.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds()) {
      const std::vector<double> master = bf16_run.trainer.student().gather(b, kind);
      const std::vector<double>& saved = file.tensor(parameter_name(b, kind)).values;
      ASSERT_EQ(saved.size(), master.size());
      for (std::size_t i = 0; i < master.size(); ++i) {
        EXPECT_EQ(saved[i], element_cast<double>(to_bfloat16(static_cast<float>(master[i]))));
        rounded_apart += saved[i] != master[i];
      }
    }
  EXPECT_GT(rounded_apart, 0u) << "the model file's weights are the masters: not BF16";

  LayoutRun<float> float_run(other_layouts()[0]);
  float_run.load(path);
  for (std::size_t b = 0; b < bf16_run.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(float_run.trainer.student().gather(b, kind),
                bf16_run.trainer.student().gather(b, kind))
          << parameter_name(b, kind) << ": not the fp32 master weights";
  float_run.trainer.step();
  const std::string float_path = float_run.save(dir.path() + "/float");
  LayoutRun<float> back(bf16_layout, Gemms::bf16);
  back.load(float_path);
  for (std::size_t b = 0; b < bf16_run.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(back.trainer.student().gather(b, kind),
                float_run.trainer.student().gather(b, kind));
}

// A bf16 run's checkpoint: model.safetensors holds its weights rounded to bf16 (what a reader
// runs), optimizer.safetensors the fp32 master weights, from which a float run resumes exactly
// on another layout; that run's float checkpoint resumes in bf16 again. Saved on 2x2, and on dp 4
// with ZeRO-1, where each replica keeps its row of the masters alone (and writes it, and reads
// it back).
TEST(Checkpoint, Bf16ModelFileAndFp32MastersResumeInFloatAndBack) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  for (const RunLayout& bf16_layout : {kSquare, other_layouts()[5]}) {
    SCOPED_TRACE(bf16_layout.name);
    expect_bf16_masters_resume(bf16_layout);
  }
}

// Float saved, double resumed: the float weights, exactly.
TEST(Checkpoint, PrecisionChangesOnResume) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  TempDir dir;
  LayoutRun<float> saving(kSquare);
  saving.trainer.step();
  const std::string path = saving.save(dir.path());
  LayoutRun<double> resumed(kSquare);
  resumed.load(path);
  for (std::size_t b = 0; b < saving.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      EXPECT_EQ(saving.trainer.student().gather(b, kind),
                resumed.trainer.student().gather(b, kind));
}

// Rank 0 writes or changes a file (the others wait).
template <class F>
void on_rank_zero(F&& change) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) change();
  MPI_Barrier(MPI_COMM_WORLD);
}

// For tests/scripts/read_checkpoint.py (ctest checkpoint_python_reader): a 2x2 run whose
// layers keep W, W^T and the permuted QKV saves a checkpoint under $MESHSLICE_CHECKPOINT_EXPORT,
// and rank 0 writes the same weights gathered by another path (Transformer::gather, element by
// element through each shard's layout) to gathered.safetensors beside it.
TEST(CheckpointFile, ExportsWeightsForThePythonReader) {
  const char* out = std::getenv("MESHSLICE_CHECKPOINT_EXPORT");
  if (!four_ranks() || !out) GTEST_SKIP() << "run by ctest checkpoint_export (4 ranks)";
  LayoutRun<double> run({"2x2_transposed_summa", {1, 1, 2, 2}, transposed_plan(), {}});
  for (int step = 0; step < 3; ++step) run.trainer.step();
  run.save(std::string(out) + "/checkpoints");
  std::vector<SafetensorsTensor> tensors;
  std::vector<std::vector<double>> values;
  for (std::size_t b = 0; b < run.shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds()) {
      const ParamShape shape = param_shape(run.shape, kind);
      tensors.push_back({parameter_name(b, kind), "F64", {shape.rows, shape.cols}});
      values.push_back(run.trainer.student().gather(b, kind));
    }
  on_rank_zero([&] {
    const SafetensorsLayout layout = safetensors_layout(tensors, {});
    std::ofstream file(std::string(out) + "/gathered.safetensors", std::ios::binary);
    file.write(layout.prefix.data(), static_cast<std::streamsize>(layout.prefix.size()));
    for (const auto& v : values)
      file.write(reinterpret_cast<const char*>(v.data()),
                 static_cast<std::streamsize>(v.size() * sizeof(double)));
    ASSERT_TRUE(file.good());
  });
}

// `what` must fail on every rank with a UserError whose message holds `words`.
void expect_error_everywhere(const std::function<void()>& what, const std::string& words) {
  const std::string message = test::user_error_of(what);
  EXPECT_NE(message.find(words), std::string::npos) << "'" << words << "' not in: " << message;
}

TEST(CheckpointErrors, DamagedIncompleteOrMismatchedCheckpointsAreClearErrors) {
  if (!four_ranks()) GTEST_SKIP() << "runs on 4 ranks";
  TempDir dir;
  LayoutRun<double> run(kSquare);
  run.trainer.step();
  const std::string first = run.save(dir.path());
  run.trainer.step();
  const std::string path = run.save(dir.path());
  const std::string model = path + "/model.safetensors";
  const auto bytes = fs::file_size(model);
  std::vector<char> original(bytes);
  on_rank_zero([&] { std::ifstream(model, std::ios::binary).read(original.data(), bytes); });
  const auto restore = [&] {
    on_rank_zero([&] { std::ofstream(model, std::ios::binary).write(original.data(), bytes); });
  };
  LayoutRun<double> other(kSquare);
  const auto load = [&](const std::string& p) { return [&, p] { other.load(p); }; };

  on_rank_zero([&] {  // one flipped byte in the data
    std::fstream f(model, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(bytes - 100));
    f.put(static_cast<char>(original[bytes - 100] ^ 0x10));
  });
  expect_error_everywhere(load(path), "model.safetensors fails its CRC-32 check");
  restore();
  on_rank_zero([&] { fs::resize_file(model, bytes - 8); });
  expect_error_everywhere(load(path), "truncated");
  restore();
  other.load(path);  // restored: loads

  on_rank_zero([&] { fs::rename(path + "/trainer.json", path + "/moved.json"); });
  expect_error_everywhere([&] { find_checkpoint(path, dir.path(), MPI_COMM_WORLD); },
                          "has no trainer.json");
  // auto passes over it to the previous complete checkpoint
  EXPECT_EQ(find_checkpoint("auto", dir.path(), MPI_COMM_WORLD), first);
  on_rank_zero([&] { fs::rename(path + "/moved.json", path + "/trainer.json"); });
  on_rank_zero([&] { fs::rename(path, path + ".partial"); });
  expect_error_everywhere([&] { find_checkpoint(path + ".partial", dir.path(), MPI_COMM_WORLD); },
                          "incomplete save");
  EXPECT_EQ(find_checkpoint("auto", dir.path(), MPI_COMM_WORLD), first);
  expect_error_everywhere([&] { find_checkpoint(model, dir.path(), MPI_COMM_WORLD); },
                          "no such checkpoint");
  expect_error_everywhere(
      [&] { find_checkpoint(first + "/model.safetensors", dir.path(), MPI_COMM_WORLD); },
      "is a file");
  EXPECT_EQ(find_checkpoint("auto", dir.path() + "/none", MPI_COMM_WORLD), "");

  // Another model shape or optimizer: named by its deck key.
  RunLayout wider = kSquare;
  LayoutRun<double> bigger(wider);
  const CheckpointFacts facts = bigger.facts();
  ModelShape deck = bigger.shape;
  deck.hidden = 48;
  expect_error_everywhere([&] { bigger.load(first, facts, deck); },
                          "model.hidden = 24, the deck asks for model.hidden = 48");
  deck = bigger.shape;
  deck.kv_heads = 3;
  expect_error_everywhere([&] { bigger.load(first, facts, deck); },
                          "model.kv_heads = 6, the deck asks for model.kv_heads = 3");
  deck = bigger.shape;
  deck.mlp = MlpKind::swiglu;
  expect_error_everywhere([&] { bigger.load(first, facts, deck); },
                          "model.mlp = gelu, the deck asks for model.mlp = swiglu");
  deck = bigger.shape;
  deck.ffn_hidden = 48;
  expect_error_everywhere([&] { bigger.load(first, facts, deck); },
                          "model.ffn_hidden = 96, the deck asks for model.ffn_hidden = 48");
  OptimizerSettings sgd = adamw();
  sgd.kind = parse_optimizer("sgd");
  LayoutRun<double> with_sgd(kSquare, sgd);
  expect_error_everywhere([&] { with_sgd.load(first); }, "optimizer.kind = adamw");
}

}  // namespace
}  // namespace meshslice::testing
