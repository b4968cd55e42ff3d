#pragma once
// The synthetic task's training loop on one replica's chips: a fixed teacher (the same
// architecture, its own seed) maps this step's random inputs to targets, the student is trained
// on them with the MSE loss, and held-out inputs give the evaluation loss. Inputs are drawn by
// global token (model_config.hpp), so the replicas of dp together see the same batch as a single
// chip would.
//
//     Trainer<RealExecutor<float>> trainer(ex, shape, plan, optimizer, seeds);
//     for (...) { const auto r = trainer.step(); ... r.loss ... }
//     double eval = trainer.eval_loss(2);
#include <cstddef>

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
    double loss = 0;       // this step's training loss (mean over the global batch), before the update
    double grad_norm = 0;  // global gradient norm before clipping
    double lr = 0;
    // Of the step's time, what making the batch took (inputs and the teacher's forward pass):
    // the task's data pipeline, not training work.
    double data_seconds = 0;
  };

  // `data_ex` makes the batches (the teacher's forward pass, the task's data pipeline); give it
  // its own executor, untraced, for a trace of `ex` to hold the training work alone. By
  // default the real executor of `ex` does both.
  Trainer(Exec& ex, const ModelShape& shape, const BlockPlan& plan,
          const OptimizerSettings& optimizer, const TaskSeeds& seeds,
          RealExecutor<T>* data_ex = nullptr);

  StepResult step();                        // the next training step
  double eval_loss(std::size_t batches);    // mean loss over held-out batches, no update
  std::size_t steps_done() const { return steps_; }
  Transformer<Exec>& student() { return student_; }
  const Transformer<Exec>& student() const { return student_; }
  // The student's, the teacher's (counted as parameters and work) and the task's buffers.
  MemoryUse memory() const;

 private:
  // Inputs of `stream` into x_ and the teacher's targets into target_; times it.
  void make_batch(std::uint64_t stream);
  // The student's output into y_; returns the replica's mean squared error, its gradient in dy_.
  double forward();
  double mean_over_replicas(double value) const;

  Exec& ex_;
  RealExecutor<T>& data_ex_;
  ModelShape shape_;
  OptimizerSettings optimizer_;
  TaskSeeds seeds_;
  Transformer<Exec> student_;
  Transformer<RealExecutor<T>> teacher_;
  Mat x_, target_, y_, dy_;
  std::size_t steps_ = 0;
  double data_seconds_ = 0;
};

extern template class Trainer<RealExecutor<float>>;
extern template class Trainer<RealExecutor<double>>;

}  // namespace meshslice
