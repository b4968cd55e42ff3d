#include "model/trainer.hpp"

#include <chrono>

#include "comm/small_all_reduce.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_math.hpp"

namespace meshslice {

template <class T>
Trainer<T>::Trainer(RealExecutor<T>& ex, const ModelShape& shape, const BlockPlan& plan,
                    const OptimizerSettings& optimizer, const TaskSeeds& seeds)
    : ex_(ex),
      shape_(shape),
      optimizer_(optimizer),
      seeds_(seeds),
      student_(ex, shape, plan, seeds.student, /*trainable=*/true),
      teacher_(ex, shape, plan, seeds.teacher, /*trainable=*/false),
      x_("inputs", student_.local_tokens(), student_.local_hidden()),
      target_("targets", student_.local_tokens(), student_.local_hidden()),
      y_("outputs", student_.local_tokens(), student_.local_hidden()),
      dy_("loss_gradient", student_.local_tokens(), student_.local_hidden()) {}

template <class T>
MemoryUse Trainer<T>::memory() const {
  MemoryUse m = student_.memory();
  const MemoryUse& teacher = teacher_.memory();
  m.parameters += teacher.parameters;
  m.work += teacher.activations + teacher.work + 4 * x_.size() * sizeof(T);
  return m;
}

template <class T>
double Trainer<T>::mean_over_replicas(double value) const {
  return sum_over(ex_.torus().axis(Axis::dp), value) / ex_.size(Axis::dp);
}

template <class T>
double Trainer<T>::forward(std::uint64_t stream) {
  const ExecSpace& space = ex_.compute_space();
  const std::size_t token0 =
      ex_.coord(Axis::dp) * shape_.tokens() + ex_.coord(Axis::row) * student_.local_tokens();
  const auto start = std::chrono::steady_clock::now();
  fill_inputs(space, x_, seeds_.data, stream, token0, ex_.coord(Axis::col) * student_.local_hidden());
  teacher_.forward(x_, target_);  // fenced
  data_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  student_.forward(x_, y_);
  // The loss is the mean over the replica's T x H elements; its gradient 2 (y - target) / (T H).
  const double elements = static_cast<double>(shape_.tokens() * shape_.hidden);
  const double local = squared_error(space, y_, target_, 2.0 / elements, dy_);
  return sum_over(ex_.torus().axis(Axis::tp), local) / elements;
}

template <class T>
typename Trainer<T>::StepResult Trainer<T>::step() {
  StepResult r;
  r.loss = mean_over_replicas(forward(train_input_stream(steps_)));
  r.data_seconds = data_seconds_;
  student_.backward(dy_);
  ++steps_;
  r.grad_norm = student_.update(optimizer_, steps_);
  r.lr = learning_rate(optimizer_, steps_);
  return r;
}

template <class T>
double Trainer<T>::eval_loss(std::size_t batches) {
  double sum = 0;
  for (std::size_t b = 0; b < batches; ++b) sum += forward(eval_input_stream(b));
  return mean_over_replicas(sum / static_cast<double>(batches));
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace meshslice
