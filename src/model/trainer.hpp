#pragma once
// The synthetic task's training loop on one replica's chips: a fixed teacher (the same
// architecture, its own seed) maps this step's random inputs to targets, the student is trained
// on them with the MSE loss, and held-out inputs give the evaluation loss. Inputs are drawn by
// global token (model_config.hpp), so the replicas of dp together see the same batch as a single
// chip would.
//
// A step cuts the replica's batch into micro-batches and runs them through the pipeline stages
// of the pp axis in the order of the schedule (pipeline/pipeline_schedule.hpp): each stage holds
// its chunks of the blocks (balanced, pipeline/stage_split.hpp), receives its inputs from the
// previous virtual stage and the output gradients from the next one, and sends on what it made,
// every message started as soon as it can be and waited for only when it is needed. The first
// stage makes the inputs; the last one holds the teacher and computes the loss. Weight
// gradients accumulate over the micro-batches; their dp averaging starts in the last one.
// The step's batch (every micro-batch's inputs and targets) is made before its pipeline runs,
// as a data loader would have it ready: the teacher's forward pass does not hold up the stages.
//
//     Trainer<RealExecutor<float>> trainer(ex, shape, plan, optimizer, seeds, step_settings);
//     for (...) { trainer.prepare_step(); const auto r = trainer.step(); ... r.loss ... }
//     double eval = trainer.eval_loss(2);
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "data/token_samples.hpp"
#include "pipeline/pipeline_schedule.hpp"
#include "pipeline/stage_split.hpp"
#include "model/step_settings.hpp"
#include "model/transformer.hpp"

namespace meshslice {

// Over an executor as the Transformer is (RealExecutor<T>, or sim::CombinedExecutor over one);
// the batches are always made on a real executor: the data pipeline is not emulated.
template <class Exec>
class Trainer {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  struct StepResult {
    double loss = 0;  // this step's training loss (mean over the global batch), before the update
    double grad_norm = 0;  // global gradient norm before clipping
    // The loss or the gradient norm was NaN or infinite: the update was not applied (the
    // parameters and optimizer state are as before the step).
    bool nonfinite = false;
    double lr = 0;
    // What making the batch took (inputs and the teacher's forward pass): the task's data
    // pipeline, not training work; prepare_step() does it, or else step() first.
    double data_seconds = 0;
    // Of the step, the time this stage waited for its neighbours' activations and gradients
    // (the pipeline's bubble, and transfers not hidden), and the time from the first pass to
    // the last message (the update excluded).
    double pipeline_wait_seconds = 0;
    double pipeline_seconds = 0;
  };

  // `data_ex` makes the batches (the teacher's forward pass, the task's data pipeline); give it
  // its own executor, untraced, for a trace of `ex` to hold the training work alone. By
  // default the real executor of `ex` does both. UserError on every rank when the step
  // settings cannot run (check_step_settings).
  //
  // A language model (shape.vocab > 0) trains on `samples` instead (a data-free executor's may
  // be null): sequence g of step s (0-based) is training sample s * dp * sequences + g, where g
  // counts the global batch's sequences replica by replica, each replica's micro-batch by
  // micro-batch and each micro-batch's mesh row by mesh row, so each mesh row reads only its
  // own sequences; evaluation batch b reads the held-out samples the same way.
  Trainer(Exec& ex, const ModelShape& shape, const ModelPlan& plan,
          const OptimizerSettings& optimizer, const TaskSeeds& seeds, const StepSettings& step = {},
          RealExecutor<T>* data_ex = nullptr, const data::TokenSamples* samples = nullptr);

  void prepare_step();                    // the next step's batch (collective over none)
  StepResult step();                      // the next training step
  double eval_loss(std::size_t batches);  // mean loss over held-out batches, no update
  // A language model's continuation of `prompt` (token ids): `count` tokens, each the most likely
  // after the last seq_len tokens or drawn (token i: draw i of `sampling`), by the distributed
  // forward pass (the model is never gathered); the same on every rank. Collective over the job.
  std::vector<int> generate(const std::vector<int>& prompt, std::size_t count,
                            const TokenSampling& sampling = {});
  std::size_t steps_done() const { return steps_; }
  // Goes on from a checkpoint of `steps` steps whose state was loaded into the student: the
  // next step is steps + 1, with that step's data and learning rate.
  void resume_at(std::size_t steps);
  Transformer<Exec>& student() { return student_; }
  const Transformer<Exec>& student() const { return student_; }
  // The blocks of every virtual stage, and this stage's order of micro-batch passes.
  const StageSplit& split() const { return split_; }
  const std::vector<PipelineSlot>& order() const { return order_; }
  // The student's, the teacher's (counted as parameters and work), the task's and the pipeline
  // messages' buffers.
  MemoryUse memory() const;

 private:
  std::size_t virtual_stage(std::size_t chunk) const { return chunk * stages_ + stage_; }
  bool first(std::size_t chunk) const { return virtual_stage(chunk) == 0; }
  bool last(std::size_t chunk) const { return virtual_stage(chunk) + 1 == stages_ * chunks_; }
  // pp displacements to the next / previous virtual stage (chunk c of the last stage hands on to
  // chunk c + 1 of the first).
  int toward_next() const;
  int toward_previous() const;
  // The message channel of micro-batch k's activations (forward) or gradients into virtual
  // stage `to`.
  int channel(std::size_t to, bool forward, std::size_t k) const;
  ModelPart part() const;  // what this rank holds of the student
  // Every micro-batch's inputs of `stream` (first stage) and the teacher's targets for them
  // (last stage); a language model's tokens of `split` batch `batch`. Times it.
  void make_batch(std::uint64_t stream);
  void make_tokens(data::Split split, std::uint64_t batch);
  bool language_model() const { return shape_.vocab > 0; }
  // The squared error of y_ against micro-batch k's target (this chip's part of the replica's
  // sum); its gradient into dy.
  double squared_error_into(std::size_t k, const Mat& dy);
  // Waits for a receive; counts the time as the pipeline's.
  void wait_for(typename Exec::OpId op);
  // The replica's mean loss from this chip's share of the squared errors, or of the language
  // model's token losses (collective).
  double replica_loss(double local_squares, std::size_t batches);
  double mean_over_replicas(double value) const;
  // `train`: a training step's forward pass (the last chunk's loss step also makes the head's
  // gradients, accumulated over micro-batches `accumulate`, dp averaging started with `sync`).
  void run_forward(std::size_t chunk, std::size_t k, std::size_t slot, double& squares, bool train,
                   bool accumulate, bool sync);
  void run_backward(std::size_t chunk, std::size_t k, std::size_t slot, bool accumulate, bool sync);
  // Micro-batch k through every virtual stage, forwards only (slot 0 of each chunk): receives
  // block until the previous virtual stage has sent, sends are waited for at the end.
  void forward_only(std::size_t k, double& squares);

  Exec& ex_;
  RealExecutor<T>* data_ex_;           // null on a data-free executor
  const data::TokenSamples* samples_;  // a language model's data
  ModelShape shape_;                   // the replica's batch
  ModelShape micro_;                   // one micro-batch
  OptimizerSettings optimizer_;
  TaskSeeds seeds_;
  StepSettings settings_;
  std::size_t stages_, stage_, chunks_, micro_batches_;
  StageSplit split_;
  std::vector<PipelineSlot> order_;
  Transformer<Exec> student_;
  std::unique_ptr<Transformer<RealExecutor<T>>> teacher_;  // on the last stage
  Mat x_, y_;  // the teacher's input on a last stage that makes none, the last chunk's output
  std::vector<Mat> batch_inputs_, batch_targets_;  // per micro-batch: first and last stage
  std::vector<TokenBatch> token_batches_;          // per micro-batch
  Mat embedding_grad_;  // a language model's first chunk's input gradient
  bool prepared_ = false;
  // Per chunk and micro-batch: the input received, the output sent, the output gradient
  // received (the loss gradient on the last virtual stage) and the input gradient sent.
  std::vector<std::vector<Mat>> inputs_, outputs_, output_grads_, input_grads_;
  std::vector<std::vector<typename Exec::OpId>> input_ops_, output_grad_ops_;
  std::vector<typename Exec::OpId> sends_;
  std::size_t micro_batch_bytes_ = 0;      // the buffers above, counted as work
  std::size_t message_staging_bytes_ = 0;  // their host staging (MPI staged), a workspace
  std::size_t steps_ = 0;
  // While generate() runs: the token row of micro-batch 0 whose next token is wanted and how it
  // is chosen (draw `draw` of `sampling`); and the id the last stage chose.
  struct NextToken {
    std::size_t row = 0;
    TokenSampling sampling;
    std::uint64_t draw = 0;
  };
  std::optional<NextToken> generating_;
  int generated_ = -1;
  double data_seconds_ = 0, wait_seconds_ = 0;
};

extern template class Trainer<RealExecutor<float>>;
extern template class Trainer<RealExecutor<double>>;

}  // namespace meshslice
