#pragma once
// Everything that happens to a parameter set between a backward pass and the next forward pass,
// over the data-parallel replicas: each gradient's dp averaging (started by the backward pass
// through the parameter's own handle as soon as the gradient is complete, progressed by the rest
// of the pass: model/gradient_sync.hpp), the global gradient norm (every replica's rows, every
// stage's blocks, every tensor-parallel shard), clipping, the optimizer's step and, with ZeRO-1,
// the all-gathers of the updated rows (a bf16 run's sharded masters' in bf16). Planned at
// construction, so an update allocates nothing.
//
//     ParameterUpdate<Exec> update(ex, params, optimizer, backward_order);
//     update.begin_step();
//     ... backward pass: update.start(p) once p's gradient is complete ...
//     const double norm = update.reduce();   // averaged over dp; the global norm
//     if (std::isfinite(norm)) update.apply(settings, t, norm);   // clipped, stepped
//     else ... update.first_nonfinite() names the culprit ...
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include <mpi.h>

#include "comm/small_all_reduce.hpp"
#include "core/errors.hpp"
#include "exec/caller_work.hpp"
#include "exec/host_reduction.hpp"
#include "model/gradient_sync.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_math.hpp"
#include "parameters/factored_step.hpp"
#include "parameters/multi_tensor.hpp"
#include "parameters/optimizer.hpp"
#include "parameters/optimizers/schedule.hpp"
#include "parameters/parameter_set.hpp"
#include "parameters/rounded_copies.hpp"

namespace meshslice {

template <class Exec>
class ParameterUpdate {
 public:
  using T = typename Exec::Scalar;

  // `order`: the parameters' indices in the order the backward pass completes their gradients;
  // each parameter's handle (Parameter::sync) is its place in it.
  ParameterUpdate(Exec& ex, ParameterSet<T>& params, const Optimizer<T>& optimizer,
                  const std::vector<std::size_t>& order)
      : ex_(ex),
        params_(params),
        optimizer_(optimizer),
        order_(order),
        dp_(static_cast<std::size_t>(ex.size(Axis::dp))),
        sync_(ex, reductions()),
        master_rows_(RoundedCopies<T>::master_rows(params)) {
    for (const Parameter<T>& p : params_) {
      update_elements_ += elements(p.updated());
      sharded_ = sharded_ || p.sharded();
    }
    plan_gradient_norm();
    if (!optimizer.element_wise())
      factored_ = std::make_unique<FactoredStep<Exec>>(ex, params, optimizer);
    else
      optimizer.prepare(params);  // its table of chunks, before the first step
  }

  std::size_t workspace_bytes() const { return sync_.workspace_bytes(); }

  void begin_step() { sync_.begin_step(); }

  // Starts averaging p's complete gradient over dp; an error unless p is next in the order.
  void start(const Parameter<T>& p) {
    if (p.sharded())
      sync_.start(p.sync, ex_.wrap(as_rows(p.grad, dp_)), ex_.wrap(p.grad_row));
    else
      sync_.start(p.sync, ex_.wrap(p.grad));
  }

  // Finishes the averaging; returns the global gradient norm (collective).
  double reduce() {
    sync_.finish();
    return std::sqrt(gradient_squares());
  }

  // Clips the averaged gradients to the global norm `norm` (reduce()'s) and steps the optimizer
  // (step t, 1-based).
  void apply(const OptimizerSettings& settings, std::size_t t, double norm) {
    const double clip = clip_factor(settings, norm);
    const ExecSpace space = ex_.compute_space();
    if (factored_) factored_->step(settings, t, clip);  // its own kernels and sums
    const double traffic = factored_ ? 0.0 : optimizer_.traffic_per_element() * update_elements_;
    ex_.compute("optimizer", LocalWork::streaming(traffic), [&] {
      if (!factored_) optimizer_.step(space, settings, t, clip, params_);
      stage_rows(space);
      fence(space, "optimizer_step");
    });
    if (sharded_) gather_rows();
  }

  // After the values were written (drawn, or a checkpoint read into values()): the sharded
  // masters' bf16 copies put together from every replica's row, as after a step (the other
  // ZeRO-1 parameters, whole already, are gathered again: a step's gathers go in one order).
  // Nothing without sharded masters. Collective over dp.
  void gather_written_values() {
    if (master_rows_.empty()) return;
    const ExecSpace space = ex_.compute_space();
    stage_rows(space);
    fence(space, "loaded_values");
    gather_rows();
  }

  // After reduce(): the first parameter in the model's order (Parameter::order) whose averaged
  // gradient holds a NaN or an infinity on any rank, as its order; `none` when every gradient
  // is finite. Collective over the job: a check made only when the
  // norm is not finite.
  static constexpr std::size_t none = ~std::size_t{0};
  std::size_t first_nonfinite() {
    unsigned long long first = none;
    const ExecSpace space = ex_.compute_space();
    for (const Parameter<T>& p : params_)
      if (!std::isfinite(sum_squares(space, p.sharded() ? p.grad_row : p.grad)))
        first = std::min<unsigned long long>(first, p.order);
    reduce_through(ex_, "nonfinite_gradient", {Axis::tp, Axis::pp, Axis::dp}, &first, 1,
                   MPI_UNSIGNED_LONG_LONG, MPI_MIN);
    return static_cast<std::size_t>(first);
  }

 private:
  // The dp reductions in the backward order, each parameter given its handle.
  std::vector<DpReduction> reductions() {
    std::vector<DpReduction> out;
    for (const std::size_t i : order_) {
      Parameter<T>& p = params_[i];
      p.sync = out.size();
      if (p.sharded())
        out.push_back({{dp_, elements(p.grad) / dp_}, true, p.master_sharded() ? bf16_cols(p) : 0});
      else
        out.push_back({{p.grad.extent(0), p.grad.extent(1)}, false});
    }
    MESHSLICE_ASSERT(out.size() == params_.size(), "ParameterUpdate: the backward order names ",
                     out.size(), " of ", params_.size(), " parameters");
    return out;
  }

  // ZeRO-1: what each parameter's all-gather sends, in its grad_row (read by now): a copy of the
  // updated row, or a sharded master's row rounded to bf16 (half the bytes).
  void stage_rows(const ExecSpace& space) {
    for (const Parameter<T>& p : params_)
      if (p.sharded() && !p.master_sharded()) Kokkos::deep_copy(space, p.grad_row, p.updated());
    master_rows_.refresh(space);
  }
  // Every replica's rows into each sharded parameter (its value, or a sharded master's bf16 copy).
  void gather_rows() {
    sync_.begin_gather();
    for (const std::size_t i : order_) {
      const Parameter<T>& p = params_[i];
      if (!p.sharded()) continue;
      if (!p.master_sharded()) {
        sync_.gather(p.sync, ex_.wrap(p.grad_row), ex_.wrap(as_rows(p.value, dp_)));
        continue;
      }
      const std::size_t cols = bf16_cols(p);  // the bf16 rows as T's: GradientSync moves T's
      sync_.gather(p.sync, ex_.wrap(Matrix<T>(p.grad_row.data(), 1, cols)),
                   ex_.wrap(Matrix<T>(reinterpret_cast<T*>(p.rounded.data()), dp_, cols)));
    }
    sync_.finish_gather();
  }
  // The T's that hold a sharded master's row in bf16 (ParameterMaker makes them whole).
  static std::size_t bf16_cols(const Parameter<T>& p) {
    return elements(p.master_row) * sizeof(bfloat16) / sizeof(T);
  }

  // The parts of the gradients whose squares gradient_squares() sums, in its fixed order (see
  // there), and the table of those this rank counts: one launch sums them all.
  void plan_gradient_norm() {
    const std::size_t replica = static_cast<std::size_t>(ex_.coord(Axis::dp));
    std::vector<MultiTensorEntry<T>> counted;
    for (const Parameter<T>& p : params_) {
      if (p.row_copies && ex_.coord(Axis::row) != 0) continue;
      const std::size_t rows = elements(p.grad) % dp_ == 0 ? dp_ : 1;
      for (std::size_t r = 0; r < rows; ++r) {
        const bool counts = !sharded_ || (p.sharded() ? r : 0) == replica;
        counted_parts_.push_back(counts);
        if (!counts) continue;
        MultiTensorEntry<T> part;
        part.value = p.sharded() ? p.grad_row : row_of(p.grad, rows, r);
        counted.push_back(part);
      }
    }
    norm_chunks_ = MultiTensorChunks<T>(counted);
    chunk_sums_ = Kokkos::View<double*, MemSpace>("gradient_norm_chunk_sums", norm_chunks_.size());
    host_chunk_sums_ = Kokkos::create_mirror_view(chunk_sums_);
  }

  // The global gradient norm's square. Per gradient, its dp rows when its elements divide over
  // dp, else the whole: partial sums of squares in a fixed order, whether ZeRO-1 holds the rows
  // or not, so the norm is bit-identical either way. With ZeRO-1 each replica adds its own row
  // (the others' are zero) and replica 0 the unsharded gradients, and one all-reduce over dp
  // (one non-zero term each: exact) completes them. The weight shards are disjoint over the
  // tensor-parallel chips; the gains are copied on every mesh row, so only row 0 counts them.
  double gradient_squares() {
    const ExecSpace space = ex_.compute_space();
    std::vector<double> partials(counted_parts_.size(), 0.0);
    ex_.compute("gradient_norm", LocalWork::streaming(static_cast<double>(update_elements_)), [&] {
      const std::vector<double> sums =
          multi_tensor_sum_squares(space, norm_chunks_, chunk_sums_, host_chunk_sums_);
      for (std::size_t i = 0, k = 0; i < partials.size(); ++i)
        if (counted_parts_[i]) partials[i] = sums.at(k++);
    });
    if (sharded_)
      reduce_through(ex_, "gradient_norm", {Axis::dp}, partials.data(), partials.size(), MPI_DOUBLE,
                     MPI_SUM);
    double local = 0;
    for (const double p : partials) local += p;
    // Over the mesh, then every stage's blocks.
    reduce_through(ex_, "gradient_norm", {Axis::tp, Axis::pp}, &local, 1, MPI_DOUBLE, MPI_SUM);
    return local;
  }

  Exec& ex_;
  ParameterSet<T>& params_;
  const Optimizer<T>& optimizer_;
  std::vector<std::size_t> order_;
  std::size_t dp_;
  std::size_t update_elements_ = 0;   // what the optimizer updates on this rank
  bool sharded_ = false;              // ZeRO-1 shards at least one parameter
  std::vector<bool> counted_parts_;   // gradient_squares()'s parts, whether this rank counts each
  MultiTensorChunks<T> norm_chunks_;  // those it counts
  Kokkos::View<double*, MemSpace> chunk_sums_;
  typename Kokkos::View<double*, MemSpace>::HostMirror host_chunk_sums_;
  GradientSync<Exec> sync_;
  RoundedCopies<T> master_rows_;  // the sharded masters' rows, rounded for their gathers
  std::unique_ptr<FactoredStep<Exec>> factored_;  // a factored optimizer's step (else none)
};

}  // namespace meshslice
