#pragma once
// The serial reference of the transformer of model/model_config.hpp: what every distributed
// training run is checked against, on the same global data. Whole tensors in std::vector and
// plain loops, on purpose — no Kokkos, MPI or BLAS — so that the reference shares nothing with
// what it checks except the scalar formulas (model/model_math.hpp) and the seeding: a layout,
// collective or GEMM bug of the distributed model cannot hide in both. The backward pass is
// written out by hand and checked against finite differences (tests/unit/test_reference_model.cpp).
//
// Activations are row-major tokens x H, the tokens whole sequences of seq_len consecutive rows;
// parameters are row-major in their logical shape (param_shape).
//
//     ReferenceTrainer<double> reference(shape, seeds, optimizer);
//     for (std::size_t step = 1; step <= steps; ++step)
//       loss = reference.train_step(dp * shape.tokens());  // what the distributed run must print
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_config.hpp"

namespace meshslice {

template <class T>
class ReferenceModel {
 public:
  // Element (r, c) of parameter (block, kind) is
  // init_value(seed, param_stream(block, kind), parameter_std(shape, kind), r, c).
  ReferenceModel(const ModelShape& shape, std::uint64_t seed);

  const ModelShape& shape() const { return shape_; }
  // train.precision bf16: the linear layers' products (and a language model's head's) round
  // their operands to bf16, as the distributed GEMMs of a bf16 run do, and QKV's and FF1's
  // outputs are rounded to bf16 before attention and the activation, as the model keeps them.
  void round_gemm_operands_to_bf16() { bf16_gemm_ = true; }
  bool rounds_gemm_operands() const { return bf16_gemm_; }
  const std::vector<T>& param(std::size_t block, ParamKind kind) const;
  std::vector<T>& param(std::size_t block, ParamKind kind);
  // Gradients of the loss of the last loss_and_gradients call.
  const std::vector<T>& gradient(std::size_t block, ParamKind kind) const;
  const std::vector<T>& input_gradient() const { return input_gradient_; }

  // The output (tokens x H) for the input x (tokens x H).
  std::vector<T> forward(const std::vector<T>& x, std::size_t tokens) const;

  // mean((y - target)^2) over every element of the output y for x; sets every gradient.
  T loss_and_gradients(const std::vector<T>& x, const std::vector<T>& target, std::size_t tokens);
  // Every gradient (and the input's) for the gradient dy of a loss of the output for x: what
  // a loss computed past the blocks (the language model's head) hands back.
  void gradients(const std::vector<T>& x, const std::vector<T>& dy, std::size_t tokens);

  // One optimizer update from the current gradients; t is the 1-based step (learning-rate
  // schedule, AdamW's bias correction). Returns the global L2 norm of all gradients (gains
  // included) before clipping.
  double step(const OptimizerSettings& optimizer, std::size_t t);
  // The same in two parts, for a model whose global norm spans more parameters (the language
  // model's): the sum of squares of every gradient, then the update with the gradients scaled
  // by `clip` (clip_factor of the global norm).
  double gradient_sum_squares() const;
  void apply_update(const OptimizerSettings& optimizer, std::size_t t, double clip);

 private:
  struct Activations;  // what the backward pass needs of one block
  std::vector<T> run_forward(const std::vector<T>& x, std::size_t tokens,
                             std::vector<Activations>* saved) const;
  void backward(const std::vector<Activations>& saved, std::vector<T> dy, std::size_t tokens);
  std::size_t index(std::size_t block, ParamKind kind) const;

  ModelShape shape_;
  bool bf16_gemm_ = false;
  // Indexed by index(block, kind); each parameter's optimizer state, made by its first step.
  std::vector<std::vector<T>> params_, grads_;
  std::vector<std::vector<std::vector<T>>> states_;
  std::vector<T> input_gradient_;
};

// mean((y - target)^2), summed in double.
template <class T>
T mean_squared_error(const std::vector<T>& y, const std::vector<T>& target);

// Tokens [first_token, first_token + tokens) x hidden of the inputs of stream `stream`:
// element (i, c) is counter_normal(data_seed, stream, first_token + i, c).
template <class T>
std::vector<T> make_inputs(std::uint64_t data_seed, std::uint64_t stream, std::size_t first_token,
                           std::size_t tokens, std::size_t hidden);

// The synthetic task end to end: a student trained to reproduce a fixed teacher's outputs.
template <class T>
class ReferenceTrainer {
 public:
  ReferenceTrainer(const ModelShape& shape, const TaskSeeds& seeds,
                   const OptimizerSettings& optimizer);

  // The next training step on global_tokens tokens (dp * shape.tokens(): every replica's
  // batch): inputs of train_input_stream(step - 1), targets from the teacher, one update.
  // Returns the loss before the update.
  T train_step(std::size_t global_tokens);
  // Mean loss over evaluation batches eval_input_stream(0 .. batches - 1) of `tokens` tokens.
  T eval_loss(std::size_t batches, std::size_t tokens) const;

  std::size_t steps_done() const { return steps_done_; }
  double last_gradient_norm() const { return last_gradient_norm_; }  // of the last train_step
  const ReferenceModel<T>& student() const { return student_; }
  // train.precision bf16: the student's GEMMs round their operands (the teacher's, the task's
  // data pipeline, do not).
  void round_gemm_operands_to_bf16() { student_.round_gemm_operands_to_bf16(); }

 private:
  TaskSeeds seeds_;
  OptimizerSettings optimizer_;
  ReferenceModel<T> student_;
  ReferenceModel<T> teacher_;
  std::size_t steps_done_ = 0;
  double last_gradient_norm_ = 0;
};

}  // namespace meshslice
