#pragma once
// The definitions of model/trainer.hpp's Trainer (instantiated as model/transformer_impl.hpp
// says for the Transformer).
#include "model/trainer.hpp"

#include <chrono>

#include "comm/small_all_reduce.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_math.hpp"

namespace meshslice {

template <class Exec>
Trainer<Exec>::Trainer(Exec& ex, const ModelShape& shape, const BlockPlan& plan,
                       const OptimizerSettings& optimizer, const TaskSeeds& seeds,
                       RealExecutor<T>* data_ex)
    : ex_(ex),
      data_ex_(data_ex ? *data_ex : ex.real()),
      shape_(shape),
      optimizer_(optimizer),
      seeds_(seeds),
      student_(ex, shape, plan, seeds.student, /*trainable=*/true),
      teacher_(data_ex_, shape, plan, seeds.teacher, /*trainable=*/false),
      x_("inputs", student_.local_tokens(), student_.local_hidden()),
      target_("targets", student_.local_tokens(), student_.local_hidden()),
      y_("outputs", student_.local_tokens(), student_.local_hidden()),
      dy_("loss_gradient", student_.local_tokens(), student_.local_hidden()) {}

template <class Exec>
MemoryUse Trainer<Exec>::memory() const {
  MemoryUse m = student_.memory();
  const MemoryUse& teacher = teacher_.memory();
  m.parameters += teacher.parameters;
  m.work += teacher.activations + teacher.work + 4 * x_.size() * sizeof(T);
  m.workspaces += teacher.workspaces;
  return m;
}

template <class Exec>
double Trainer<Exec>::mean_over_replicas(double value) const {
  return sum_over(ex_.torus().axis(Axis::dp), value) / ex_.size(Axis::dp);
}

template <class Exec>
void Trainer<Exec>::make_batch(std::uint64_t stream) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t token0 =
      ex_.coord(Axis::dp) * shape_.tokens() + ex_.coord(Axis::row) * student_.local_tokens();
  fill_inputs(data_ex_.compute_space(), x_, seeds_.data, stream, token0,
              ex_.coord(Axis::col) * student_.local_hidden());
  teacher_.forward(x_, target_);  // fenced
  data_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Exec>
double Trainer<Exec>::forward() {
  student_.forward(x_, y_);
  // The loss is the mean over the replica's T x H elements; its gradient 2 (y - target) / (T H).
  const double elements = static_cast<double>(shape_.tokens() * shape_.hidden);
  double local = 0, total = 0;
  ex_.compute("loss", LocalWork::streaming(3.0 * y_.size()), [&] {
    local = squared_error(ex_.compute_space(), y_, target_, 2.0 / elements, dy_);
  });
  ex_.communicate("loss", Axis::tp, {CommWork::all_reduce, 1},
                  [&] { total = sum_over(ex_.torus().axis(Axis::tp), local); });
  return total / elements;
}

template <class Exec>
typename Trainer<Exec>::StepResult Trainer<Exec>::step() {
  StepResult r;
  make_batch(train_input_stream(steps_));
  r.data_seconds = data_seconds_;
  ex_.phase("forward", [&] { r.loss = mean_over_replicas(forward()); });
  ex_.phase("backward", [&] { student_.backward(dy_); });
  ++steps_;
  ex_.phase("update", [&] { r.grad_norm = student_.update(optimizer_, steps_); });
  r.lr = learning_rate(optimizer_, steps_);
  return r;
}

template <class Exec>
double Trainer<Exec>::eval_loss(std::size_t batches) {
  double sum = 0;
  for (std::size_t b = 0; b < batches; ++b) {
    make_batch(eval_input_stream(b));
    sum += forward();
  }
  return mean_over_replicas(sum / static_cast<double>(batches));
}


}  // namespace meshslice
