#pragma once
// The definitions of model/trainer.hpp's Trainer (instantiated as model/transformer_impl.hpp
// says for the Transformer).
#include "model/trainer.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include "comm/small_all_reduce.hpp"
#include "exec/host_reduction.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_buffer.hpp"
#include "model/model_math.hpp"
#include "parameters/optimizers/schedule.hpp"

namespace meshslice {
namespace trainer_detail {

// The settings checked before anything is built (a member initializer's first use).
inline const StepSettings& checked(const StepSettings& step, const ModelShape& shape,
                                   const MeshShape& mesh) {
  check_step_settings(step, shape, mesh);
  return step;
}

// The executor's mesh (a data-free executor's is virtual: not its MPI job's).
template <class Exec>
MeshShape mesh_of(const Exec& ex) {
  return {ex.size(Axis::dp), ex.size(Axis::pp), ex.size(Axis::row), ex.size(Axis::col)};
}

// Where the batches are made: `given`, or the executor's own real one; none without data.
template <class Exec>
auto* data_executor(Exec& ex, RealExecutor<typename Exec::Scalar>* given) {
  if constexpr (Exec::holds_data)
    return given ? given : &ex.real();
  else
    return given;
}

}  // namespace trainer_detail

template <class Exec>
Trainer<Exec>::Trainer(Exec& ex, const ModelShape& shape, const ModelPlan& plan,
                       const OptimizerSettings& optimizer, const TaskSeeds& seeds,
                       const StepSettings& step, RealExecutor<T>* data_ex,
                       const data::TokenSamples* samples)
    : ex_(ex),
      data_ex_(trainer_detail::data_executor(ex, data_ex)),
      samples_(samples),
      shape_(shape),
      micro_(step.micro_batch_shape(shape)),
      optimizer_(optimizer),
      seeds_(seeds),
      settings_(trainer_detail::checked(step, shape, trainer_detail::mesh_of(ex))),
      stages_(static_cast<std::size_t>(ex.size(Axis::pp))),
      stage_(static_cast<std::size_t>(ex.coord(Axis::pp))),
      chunks_(step.virtual_stages),
      micro_batches_(step.micro_batches),
      split_(pipeline_split(step, shape, trainer_detail::mesh_of(ex))),
      order_(pipeline_order(step.schedule, stages_, stage_, micro_batches_, chunks_)),
      student_(ex, micro_, plan, seeds.student, /*trainable=*/true, part()),
      y_(model_matrix<Exec>("outputs", student_.local_tokens(), student_.local_hidden())),
      inputs_(chunks_),
      outputs_(chunks_),
      output_grads_(chunks_),
      input_grads_(chunks_),
      input_ops_(chunks_),
      output_grad_ops_(chunks_) {
  require(!language_model() || samples_ || !data_ex_,
          "a language model (model.vocab > 0) trains on a token dataset: none was given");
  // Per micro-batch buffers, counted as work.
  const auto per_micro_batch = [&](bool wanted, const char* label) {
    std::vector<Mat> pool;
    for (std::size_t k = 0; wanted && k < micro_batches_; ++k) {
      pool.push_back(model_matrix<Exec>(label, student_.local_tokens(), student_.local_hidden()));
      micro_batch_bytes_ += elements(pool.back()) * sizeof(T);
    }
    return pool;
  };
  batch_inputs_ = per_micro_batch(first(0), "inputs");
  if (language_model()) {  // the tokens instead of a teacher
    token_batches_.resize(micro_batches_);
    if (first(0)) {
      embedding_grad_ = model_matrix<Exec>("embedding_gradient", student_.local_tokens(),
                                           student_.local_hidden());
      micro_batch_bytes_ += elements(embedding_grad_) * sizeof(T);
    }
  } else if (last(chunks_ - 1)) {
    // Without data (a data-free executor) there is no teacher: the loss is not computed.
    if (data_ex_)
      teacher_ = std::make_unique<Transformer<RealExecutor<T>>>(*data_ex_, micro_, plan,
                                                                seeds.teacher, false);
    batch_targets_ = per_micro_batch(true, "targets");
    if (!first(0)) {  // the teacher's input, made one micro-batch at a time
      x_ = model_matrix<Exec>("teacher_inputs", student_.local_tokens(), student_.local_hidden());
      micro_batch_bytes_ += elements(x_) * sizeof(T);
    }
  }
  for (std::size_t c = 0; c < chunks_; ++c) {
    inputs_[c] = per_micro_batch(!first(c), "stage_input");
    outputs_[c] = per_micro_batch(!last(c), "stage_output");
    output_grads_[c] = per_micro_batch(true, last(c) ? "loss_gradient" : "stage_output_gradient");
    input_grads_[c] = per_micro_batch(!first(c), "stage_input_gradient");
    input_ops_[c].resize(micro_batches_);
    output_grad_ops_[c].resize(micro_batches_);
  }
  // A step posts every receive at its start and waits for its sends at its end: each message
  // buffer's staging may be in flight at once (where MPI is staged through host mirrors), made
  // here rather than in the first step.
  std::size_t messages = 0;
  for (std::size_t c = 0; c < chunks_; ++c)
    messages += inputs_[c].size() + outputs_[c].size() + input_grads_[c].size() +
                (last(c) ? 0 : output_grads_[c].size());
  message_staging_bytes_ =
      ex_.reserve_messages(messages, student_.local_tokens() * student_.local_hidden());
}

template <class Exec>
ModelPart Trainer<Exec>::part() const {
  ModelPart part{{}, settings_.checkpointed, settings_.zero, optimizer_.kind};
  for (std::size_t c = 0; c < chunks_; ++c) {
    const std::size_t vs = virtual_stage(c);
    part.chunks.push_back({split_.first[vs], split_.blocks(vs), peak_activations(order_, c)});
  }
  return part;
}

template <class Exec>
int Trainer<Exec>::toward_next() const {
  return stage_ + 1 < stages_ ? 1 : -static_cast<int>(stages_ - 1);
}

template <class Exec>
int Trainer<Exec>::toward_previous() const {
  return stage_ > 0 ? -1 : static_cast<int>(stages_ - 1);
}

template <class Exec>
int Trainer<Exec>::channel(std::size_t to, bool forward, std::size_t k) const {
  return static_cast<int>((2 * to + (forward ? 0 : 1)) * micro_batches_ + k);
}

template <class Exec>
MemoryUse Trainer<Exec>::memory() const {
  MemoryUse m = student_.memory();
  m.work += micro_batch_bytes_ + elements(y_) * sizeof(T);
  m.workspaces += message_staging_bytes_;
  if (teacher_) {
    const MemoryUse& teacher = teacher_->memory();
    m.parameters += teacher.parameters;
    m.work += teacher.activations + teacher.work;
    m.workspaces += teacher.workspaces;
  }
  return m;
}

template <class Exec>
double Trainer<Exec>::mean_over_replicas(double value) const {
  return sum_over(ex_.torus().axis(Axis::dp), value) / ex_.size(Axis::dp);
}

template <class Exec>
void Trainer<Exec>::make_tokens(data::Split split, std::uint64_t batch) {
  // Only the stages that embed or take the loss read tokens.
  if (!data_ex_ || !(student_.embeds() || student_.has_head())) return;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t len = shape_.seq_len, per_row = micro_.sequences / ex_.mesh_rows();
  const std::uint64_t first =
      (batch * ex_.size(Axis::dp) + ex_.coord(Axis::dp)) * shape_.sequences +
      ex_.coord(Axis::row) * per_row;
  std::vector<std::int32_t> sample(len + 1);
  for (std::size_t k = 0; k < micro_batches_; ++k) {
    std::vector<int> ids, targets;
    for (std::size_t j = 0; j < per_row; ++j) {
      samples_->sample(split, static_cast<std::int64_t>(first + k * micro_.sequences + j),
                       sample.data());
      ids.insert(ids.end(), sample.begin(), sample.end() - 1);
      targets.insert(targets.end(), sample.begin() + 1, sample.end());
    }
    token_batches_[k] = make_token_batch(data_ex_->torus(), student_.vocab(), ids, targets);
  }
  data_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Exec>
void Trainer<Exec>::make_batch(std::uint64_t stream) {
  if (!data_ex_) return;  // no data
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < micro_batches_; ++k) {
    // Micro-batch k of replica r: global tokens r T + k T / m onwards, split over the mesh rows.
    const std::size_t token0 = ex_.coord(Axis::dp) * shape_.tokens() + k * micro_.tokens() +
                               ex_.coord(Axis::row) * student_.local_tokens();
    const Mat& x = batch_inputs_.empty() ? x_ : batch_inputs_[k];
    if (!batch_inputs_.empty() || teacher_)
      fill_inputs(data_ex_->compute_space(), x, seeds_.data, stream, token0,
                  ex_.coord(Axis::col) * student_.local_hidden());
    if (teacher_) teacher_->forward(x, batch_targets_[k]);  // fenced
  }
  fence(data_ex_->compute_space(), "batch");
  data_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Exec>
double Trainer<Exec>::squared_error_into(std::size_t k, const Mat& dy) {
  // The loss is the mean over the replica's T x H elements; its gradient 2 (y - target) / (T H).
  const double count = static_cast<double>(shape_.tokens() * shape_.hidden);
  double local = 0;
  ex_.compute("loss", LocalWork::streaming(3.0 * elements(y_)), [&] {
    local = squared_error(ex_.compute_space(), y_, batch_targets_[k], 2.0 / count, dy);
  });
  return local;
}

template <class Exec>
void Trainer<Exec>::wait_for(typename Exec::OpId op) {
  const auto start = std::chrono::steady_clock::now();
  ex_.phase("pipeline_wait", [&] { ex_.wait(op); });
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Exec>
double Trainer<Exec>::replica_loss(double local_squares, std::size_t batches) {
  // Over the mesh, then from the last stage to every stage (the others add nothing).
  double total = local_squares;
  reduce_through(ex_, "loss", {Axis::tp, Axis::pp}, &total, 1, MPI_DOUBLE, MPI_SUM);
  // The mean over the replica's tokens (language model) or over its outputs' elements.
  const double count =
      static_cast<double>(shape_.tokens() * (language_model() ? 1 : shape_.hidden));
  return total / count / static_cast<double>(batches);
}

template <class Exec>
void Trainer<Exec>::run_forward(std::size_t c, std::size_t k, std::size_t slot, double& squares,
                                bool train, bool accumulate, bool sync) {
  if (!first(c)) wait_for(input_ops_[c][k]);
  if (first(c) && language_model()) student_.embed(token_batches_[k], batch_inputs_[k]);
  student_.forward(c, slot, first(c) ? batch_inputs_[k] : inputs_[c][k],
                   last(c) ? y_ : outputs_[c][k]);
  if (last(c) && generating_)
    generated_ =
        student_.next_token(y_, generating_->row, generating_->sampling, generating_->draw);
  else if (last(c) && language_model())
    squares += student_.head_loss(token_batches_[k], y_, 1.0 / static_cast<double>(shape_.tokens()),
                                  train ? output_grads_[c][k] : Mat(), accumulate, sync);
  else if (last(c))
    squares += squared_error_into(k, output_grads_[c][k]);
  else
    sends_.push_back(ex_.start_send(Axis::pp, ex_.wrap(outputs_[c][k]), toward_next(),
                                    channel(virtual_stage(c) + 1, true, k)));
}

template <class Exec>
void Trainer<Exec>::run_backward(std::size_t c, std::size_t k, std::size_t slot, bool accumulate,
                                 bool sync) {
  if (!last(c)) wait_for(output_grad_ops_[c][k]);
  const Mat& dx = !first(c) ? input_grads_[c][k] : embedding_grad_;  // empty: not wanted
  student_.backward(c, slot, output_grads_[c][k], dx, accumulate, sync);
  if (first(c) && language_model())
    student_.embed_backward(token_batches_[k], embedding_grad_, accumulate, sync);
  if (!first(c))
    sends_.push_back(ex_.start_send(Axis::pp, ex_.wrap(input_grads_[c][k]), toward_previous(),
                                    channel(virtual_stage(c) - 1, false, k)));
}

template <class Exec>
void Trainer<Exec>::prepare_step() {
  if (prepared_) return;
  data_seconds_ = 0;
  if (language_model())
    make_tokens(data::Split::train, steps_);
  else
    make_batch(train_input_stream(steps_));
  prepared_ = true;
}

template <class Exec>
typename Trainer<Exec>::StepResult Trainer<Exec>::step() {
  prepare_step();
  StepResult r;
  const auto start = std::chrono::steady_clock::now();
  wait_seconds_ = 0;
  student_.begin_step();
  // Every message of the step is expected from the start (each has its own channel and buffer),
  // so a neighbour's send never waits for this stage to get round to it.
  for (std::size_t c = 0; c < chunks_; ++c)
    for (std::size_t k = 0; k < micro_batches_; ++k) {
      if (!first(c))
        input_ops_[c][k] = ex_.start_recv(Axis::pp, ex_.wrap(inputs_[c][k]), toward_previous(),
                                          channel(virtual_stage(c), true, k));
      if (!last(c))
        output_grad_ops_[c][k] = ex_.start_recv(Axis::pp, ex_.wrap(output_grads_[c][k]),
                                                toward_next(), channel(virtual_stage(c), false, k));
    }
  // Activation slots are taken by a forward and given back by its backward.
  std::vector<std::vector<std::size_t>> free_slots(chunks_), slot_of(chunks_);
  std::vector<std::size_t> forwards(chunks_, 0), backwards(chunks_, 0);
  for (std::size_t c = 0; c < chunks_; ++c) {
    for (std::size_t s = student_.chunks()[c].slots; s-- > 0;) free_slots[c].push_back(s);
    slot_of[c].resize(micro_batches_);
  }
  double squares = 0;
  for (const PipelineSlot& pass : order_) {
    const std::size_t c = pass.chunk, k = pass.micro_batch;
    if (pass.forward) {
      slot_of[c][k] = free_slots[c].back();
      free_slots[c].pop_back();
      const std::size_t done = forwards[c]++;  // a language model's head: as a backward's
      ex_.phase("forward", [&] {
        run_forward(c, k, slot_of[c][k], squares, true, done > 0, done + 1 == micro_batches_);
      });
    } else {
      const bool accumulate = backwards[c]++ > 0;
      ex_.phase("backward", [&] {
        run_backward(c, k, slot_of[c][k], accumulate, backwards[c] == micro_batches_);
      });
      free_slots[c].push_back(slot_of[c][k]);
    }
  }
  for (const auto& op : sends_) wait_for(op);
  sends_.clear();
  r.pipeline_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.pipeline_wait_seconds = wait_seconds_;
  r.loss = mean_over_replicas(replica_loss(squares, 1));
  r.data_seconds = data_seconds_;
  prepared_ = false;
  ++steps_;
  ex_.phase("update", [&] {
    r.grad_norm = student_.reduce_gradients();
    r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
    if (!r.nonfinite) student_.apply_update(optimizer_, steps_, r.grad_norm);
  });
  r.lr = learning_rate(optimizer_, steps_);
  return r;
}

template <class Exec>
void Trainer<Exec>::resume_at(std::size_t steps) {
  require(!prepared_, "Trainer::resume_at between prepare_step() and step()");
  steps_ = steps;
  student_.values_written();
}

template <class Exec>
double Trainer<Exec>::eval_loss(std::size_t batches) {
  // Forwards only, each micro-batch through the virtual stages in turn (slot 0 of each chunk):
  // receives block until the previous virtual stage has sent, sends are waited for once the
  // micro-batch has passed.
  require(!prepared_, "Trainer::eval_loss between prepare_step() and step()");
  double squares = 0;
  for (std::size_t b = 0; b < batches; ++b) {
    if (language_model())
      make_tokens(data::Split::held_out, b);
    else
      make_batch(eval_input_stream(b));
    for (std::size_t k = 0; k < micro_batches_; ++k) forward_only(k, squares);
  }
  return mean_over_replicas(replica_loss(squares, batches));
}

template <class Exec>
void Trainer<Exec>::forward_only(std::size_t k, double& squares) {
  for (std::size_t c = 0; c < chunks_; ++c) {
    if (!first(c))
      input_ops_[c][k] = ex_.start_recv(Axis::pp, ex_.wrap(inputs_[c][k]), toward_previous(),
                                        channel(virtual_stage(c), true, k));
    run_forward(c, k, 0, squares, /*train=*/false, false, false);
  }
  for (const auto& op : sends_) ex_.wait(op);
  sends_.clear();
}

template <class Exec>
std::vector<int> Trainer<Exec>::generate(const std::vector<int>& prompt, std::size_t count,
                                         const TokenSampling& sampling) {
  require(language_model() && data_ex_, "Trainer::generate: a language model with data");
  require(!prepared_, "Trainer::generate between prepare_step() and step()");
  require(!prompt.empty(), "generation needs a prompt of at least one token");
  // The context is the first sequence of micro-batch 0, on mesh row 0; every other token is 0
  // (attention is causal and stays within a sequence, so they change nothing).
  const std::size_t len = shape_.seq_len, rows = student_.local_tokens();
  std::vector<int> context = prompt, made;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t start = context.size() > len ? context.size() - len : 0;
    std::vector<int> ids(rows, 0);
    if (ex_.coord(Axis::row) == 0) std::copy(context.begin() + start, context.end(), ids.begin());
    if (student_.embeds() || student_.has_head())
      token_batches_[0] =
          make_token_batch(data_ex_->torus(), student_.vocab(), ids, std::vector<int>(rows, 0));
    generating_ = NextToken{context.size() - start - 1, sampling, i};
    generated_ = -1;
    double unused = 0;
    forward_only(0, unused);
    generating_.reset();
    // Mesh row 0 of the last stage chose it: every rank takes it.
    int token = ex_.coord(Axis::row) == 0 ? generated_ : -1;
    reduce_through(ex_, "next_token", {Axis::tp, Axis::pp, Axis::dp}, &token, 1, MPI_INT, MPI_MAX);
    context.push_back(token);
    made.push_back(token);
  }
  return made;
}

}  // namespace meshslice
