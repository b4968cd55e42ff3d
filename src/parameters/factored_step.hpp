#pragma once
// The step of a factored optimizer (optimizers/adafactor.hpp: its formulas) over a parameter
// set, planned at construction so that a step allocates nothing. A weight matrix's row and
// column factors are whole on every rank that holds a part of it; its shard, or with ZeRO-1 this
// replica's row of the shard, holds some elements of some logical rows and columns. A step,
// whatever the number of parameters:
//   1. one launch sums the squared gradients along each stored row and column of each matrix
//      shard, and the squared weights in runs (a team per line); one copy brings the lines' sums
//      to the host, which adds them into each matrix's logical rows and columns (through its
//      StoredLayout: W or W^T, grouped columns) and each tensor's weight sum; one all-reduce over
//      the mesh and the replicas completes them. Each element is counted once, by the ranks the
//      gradient norm counts it on (replica 0 unless ZeRO-1 shards it, mesh row 0 for a gain).
//   2. one copy takes the sums to the device; one launch advances each matrix's factors and
//      takes the mean of its row factor (a team per matrix).
//   3. one launch computes each element's direction U (advancing a gain's moment) and sums U^2
//      per chunk; one copy, one all-reduce of a value per tensor; each tensor's step size made
//      on the host and copied over.
//   4. one launch updates every weight from U, computed again rather than stored.
// The sums are in a fixed order (a team per line or chunk, then the host), so steps repeat.
//
//     FactoredStep<Exec> step(ex, params, optimizer);   // optimizer.element_wise() false
//     step.step(settings, t, clip);                      // gradients averaged over dp
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "exec/caller_work.hpp"
#include "exec/host_reduction.hpp"
#include "parameters/multi_tensor.hpp"
#include "parameters/optimizer.hpp"
#include "parameters/parameter_set.hpp"

namespace meshslice {

// What the kernels need of one parameter: where its updated elements lie, and its factors (null
// for a vector, which keeps its moment as a chunk state). Each stored row and column of the
// shard has its logical line looked up once at planning (a row of W is a logical row, of W^T a
// logical column; grouped columns mapped), so an element costs one division, not the layout's.
template <class T>
struct FactoredTensor {
  // The line of a stored row or column past the logical shape (the vocabulary's padding).
  static constexpr std::uint32_t kPadding = ~std::uint32_t{0};
  std::size_t shard_cols = 1;  // the shard's stored columns
  std::size_t first = 0;       // the updated elements start at this element of the shard
  std::size_t rows = 0, cols = 0;
  bool transposed = false;
  const std::uint32_t* stored_row_line = nullptr;  // per stored row, its logical line
  const std::uint32_t* stored_col_line = nullptr;  // per stored column
  T* row_factor = nullptr;
  T* col_factor = nullptr;
  std::size_t sums = 0;  // its rows' squares at sums[sums + i], its columns' after them

  // Logical row and column of updated element `element`; false for the vocabulary's padding.
  KOKKOS_INLINE_FUNCTION bool logical(std::size_t element, std::size_t& row,
                                      std::size_t& col) const {
    // In 32 bits (a shard's elements are fewer: add_stored_lines checks), a division several
    // times cheaper than a 64-bit one on a CPU.
    const auto e = static_cast<std::uint32_t>(first + element);
    const std::uint32_t r = e / static_cast<std::uint32_t>(shard_cols);
    const std::uint32_t a = stored_row_line[r];
    const std::uint32_t b = stored_col_line[e - r * static_cast<std::uint32_t>(shard_cols)];
    row = transposed ? b : a;
    col = transposed ? a : b;
    return a != kPadding && b != kPadding;
  }
};

// count elements from data with this stride, whose squares one team sums.
template <class T>
struct SquaresLine {
  const T* data = nullptr;
  std::size_t stride = 1;
  std::uint32_t count = 0;
};

// line_sums(l) = the sum of the squares of line l's elements, in double: one launch.
template <class T>
void sum_line_squares(const ExecSpace& space, const Kokkos::View<SquaresLine<T>*, MemSpace>& lines,
                      const Kokkos::View<double*, MemSpace>& line_sums) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "factored_line_squares", Policy(space, static_cast<int>(lines.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const SquaresLine<T> line = lines(team.league_rank());
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, line.count),
            [&](std::uint32_t k, double& acc) {
              const double x = static_cast<double>(line.data[k * line.stride]);
              acc += x * x;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { line_sums(team.league_rank()) = sum; });
      });
}

// Advances every matrix's factors from the reduced squares and writes 1 / max(mean(R), eps1):
// a team per tensor (vectors skipped), one launch.
template <class D, class T>
void advance_factors(const ExecSpace& space, const typename D::Scalars& u,
                     const Kokkos::View<FactoredTensor<T>*, MemSpace>& tensors,
                     const Kokkos::View<double*, MemSpace>& sums,
                     const Kokkos::View<T*, MemSpace>& inverse_row_means) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "factored_advance", Policy(space, static_cast<int>(tensors.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const FactoredTensor<T> f = tensors(team.league_rank());
        if (!f.row_factor) return;
        const double rows = static_cast<double>(f.rows), cols = static_cast<double>(f.cols);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, f.cols), [&](std::size_t j) {
          f.col_factor[j] = T(D::factor(u, f.col_factor[j], sums(f.sums + f.rows + j) / rows));
        });
        double row_sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, f.rows),
            [&](std::size_t i, double& acc) {
              const T r = T(D::factor(u, f.row_factor[i], sums(f.sums + i) / cols));
              f.row_factor[i] = r;
              acc += static_cast<double>(r);
            },
            row_sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          inverse_row_means(team.league_rank()) = T(D::inverse_row_mean(u, row_sum / rows));
        });
      });
}

// Element i of a chunk's direction U (the descriptor's), advancing a vector's moment when
// `advance`.
template <class D, class T>
struct FactoredDirection {
  typename D::Scalars scalars[2];
  Kokkos::View<FactoredTensor<T>*, MemSpace> tensors;
  Kokkos::View<T*, MemSpace> inverse_row_means;

  KOKKOS_INLINE_FUNCTION T operator()(const TensorChunk<T>& c, std::uint32_t i,
                                      bool advance) const {
    const typename D::Scalars& u = scalars[c.decays];
    const FactoredTensor<T>& f = tensors(c.tensor);
    if (!f.row_factor) return D::vector_direction(u, c.grad[i], c.state[0][i], advance);
    std::size_t row = 0, col = 0;
    if (!f.logical(c.offset + i, row, col)) return T(0);  // a vocabulary's padding
    return D::factored_direction(u, c.grad[i], f.row_factor[row], f.col_factor[col],
                                 inverse_row_means(c.tensor));
  }
};

template <class D, class T>
struct DirectionSquare {  // U^2, advancing the vectors' moments: step 3
  FactoredDirection<D, T> direction;
  KOKKOS_INLINE_FUNCTION double operator()(const TensorChunk<T>& c, std::uint32_t i) const {
    const double x = static_cast<double>(direction(c, i, true));
    return x * x;
  }
};

template <class D, class T>
struct FactoredUpdate {  // step 4
  FactoredDirection<D, T> direction;
  Kokkos::View<T*, MemSpace> steps;
  KOKKOS_INLINE_FUNCTION void operator()(const TensorChunk<T>& c, std::uint32_t i) const {
    D::update(direction.scalars[c.decays], c.value[i], direction(c, i, false), steps(c.tensor));
  }
};

template <class Exec>
class FactoredStep {
 public:
  using T = typename Exec::Scalar;

  FactoredStep(Exec& ex, const ParameterSet<T>& params, const Optimizer<T>& optimizer)
      : ex_(ex), params_(params), optimizer_(optimizer) {
    MESHSLICE_ASSERT(!optimizer.element_wise(), "FactoredStep: ", optimizer_name(optimizer.kind()),
                     " is element-wise");
    std::size_t slots = params.size();  // each tensor's weight squares first, then the factors
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Parameter<T>& p = params[i];
      elements_.push_back(static_cast<double>(p.global.rows * p.global.cols));
      counts_.push_back(p.update_counts(ex.coord(Axis::dp), ex.coord(Axis::row)));
      factor_slots_.push_back(slots);
      factored_.push_back(optimizer_factors(optimizer.kind(), p.global.rows, p.global.cols));
      if (factored_.back()) slots += p.global.rows + p.global.cols;
      update_elements_ += static_cast<double>(elements(p.updated()));
    }
    host_sums_.assign(slots, 0.0);
    tensor_sums_.assign(params.size(), 0.0);
    if constexpr (Exec::holds_data) plan();
  }

  // Step t (from 1) of every parameter, gradients scaled by `clip`.
  void step(const OptimizerSettings& settings, std::size_t t, double clip) {
    visit_optimizer(optimizer_.kind(), [&](auto descriptor) {
      using D = decltype(descriptor);
      if constexpr (IsFactored<D>::value) run<D>(step_scalars<D>(settings, t, clip), clip);
    });
  }

 private:
  template <class D>
  void run(const std::array<typename D::Scalars, 2>& scalars, double clip) {
    const ExecSpace space = ex_.compute_space();
    const double n = update_elements_;
    ex_.compute("factored_sums", LocalWork::streaming(2 * n), [&] {
      sum_line_squares(space, lines_, line_sums_);
      Kokkos::deep_copy(space, host_line_sums_, line_sums_);
      fence(space, "factored_sums");
      std::fill(host_sums_.begin(), host_sums_.end(), 0.0);
      for (std::size_t l = 0; l < line_slots_.size(); ++l)
        host_sums_[line_slots_[l]] += host_line_sums_(l) * (line_of_gradient_[l] ? clip * clip : 1);
    });
    reduce_through(ex_, "factored_sums", {Axis::tp, Axis::dp}, host_sums_.data(), host_sums_.size(),
                   MPI_DOUBLE, MPI_SUM);
    const FactoredDirection<D, T> direction{{scalars[0], scalars[1]}, tensors_, inverse_row_means_};
    ex_.compute("factored_directions", LocalWork::streaming(n), [&] {
      Kokkos::deep_copy(space, sums_, host_sum_view());
      advance_factors<D>(space, scalars[0], tensors_, sums_, inverse_row_means_);
      multi_tensor_sum_each("factored_direction_squares", space, chunks_,
                            DirectionSquare<D, T>{direction}, chunk_sums_);
      Kokkos::deep_copy(space, host_chunk_sums_, chunk_sums_);
      fence(space, "factored_directions");
      std::fill(tensor_sums_.begin(), tensor_sums_.end(), 0.0);
      for (std::size_t k = 0; k < chunks_.size(); ++k) {
        const std::size_t tensor = chunk_tensor_[k];
        if (counts_[tensor]) tensor_sums_[tensor] += host_chunk_sums_(k);
      }
    });
    reduce_through(ex_, "factored_direction_squares", {Axis::tp, Axis::dp}, tensor_sums_.data(),
                   tensor_sums_.size(), MPI_DOUBLE, MPI_SUM);
    ex_.compute("factored_update", LocalWork::streaming(3 * n), [&] {
      for (std::size_t i = 0; i < params_.size(); ++i)
        host_steps_(i) =
            static_cast<T>(D::step_size(scalars[0], std::sqrt(host_sums_[i] / elements_[i]),
                                        std::sqrt(tensor_sums_[i] / elements_[i])));
      Kokkos::deep_copy(space, steps_, host_steps_);
      multi_tensor_for_each("factored_update", space, chunks_,
                            FactoredUpdate<D, T>{direction, steps_});
    });
  }

  // The host sums as a view the device copy reads.
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
  host_sum_view() {
    return Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
        host_sums_.data(), host_sums_.size());
  }

  // The tables: every tensor's chunks, its device facts, and the lines whose squares it sums.
  void plan() {
    std::vector<MultiTensorEntry<T>> entries;
    std::vector<FactoredTensor<T>> facts;
    std::vector<SquaresLine<T>> lines;
    std::vector<std::uint32_t> line_of_stored;  // every tensor's stored rows', then columns'
    std::vector<std::size_t> first_stored;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const Parameter<T>& p = params_[i];
      const std::vector<Matrix<T>>& state = optimizer_.states(i);
      const bool factored = factored_[i];
      MultiTensorEntry<T> entry{p.updated(), p.update_gradient(), {}, p.decays};
      FactoredTensor<T> f;
      f.shard_cols = p.value.extent(1);
      f.first = p.sharded() ? p.dp_row * elements(p.updated()) : 0;
      f.rows = p.global.rows;
      f.cols = p.global.cols;
      f.transposed = p.layout.transposed;
      f.sums = factor_slots_[i];
      first_stored.push_back(line_of_stored.size());
      if (factored) {
        f.row_factor = state.at(0).data();
        f.col_factor = state.at(1).data();
        add_stored_lines(line_of_stored, p);
      } else {
        entry.state = state;
      }
      entries.push_back(entry);
      facts.push_back(f);
      if (!counts_[i]) continue;
      add_lines(lines, i, p.layout, f, p.value.extent(0), entry.value, entry.grad, factored);
    }
    stored_lines_ = to_device<std::uint32_t>("factored_stored_lines", line_of_stored);
    for (std::size_t i = 0; i < facts.size(); ++i) {
      if (!facts[i].row_factor) continue;
      facts[i].stored_row_line = stored_lines_.data() + first_stored[i];
      facts[i].stored_col_line = facts[i].stored_row_line + params_[i].value.extent(0);
    }
    chunks_ = MultiTensorChunks<T>(entries);
    for (std::size_t t = 0; t < chunks_.tensors(); ++t)
      for (std::size_t k = chunks_.first_chunk(t); k < chunks_.first_chunk(t + 1); ++k)
        chunk_tensor_.push_back(t);
    tensors_ = to_device<FactoredTensor<T>>("factored_tensors", facts);
    lines_ = to_device<SquaresLine<T>>("factored_lines", lines);
    line_sums_ = Kokkos::View<double*, MemSpace>("factored_line_sums", lines.size());
    host_line_sums_ = Kokkos::create_mirror_view(line_sums_);
    sums_ = Kokkos::View<double*, MemSpace>("factored_sums", host_sums_.size());
    inverse_row_means_ = Kokkos::View<T*, MemSpace>("factored_inverse_row_means", params_.size());
    steps_ = Kokkos::View<T*, MemSpace>("factored_steps", params_.size());
    host_steps_ = Kokkos::create_mirror_view(steps_);
    chunk_sums_ = Kokkos::View<double*, MemSpace>("factored_chunk_sums", chunks_.size());
    host_chunk_sums_ = Kokkos::create_mirror_view(chunk_sums_);
  }

  // The lines of tensor i's updated elements [first, end) of its shard: its weights' squares
  // along each stored row into its weight slot and, factored, its gradient's along each stored
  // row and column into the logical row or column that is (a stored row is a logical row of W,
  // a logical column of W^T). A vocabulary's padding, stored rows or columns past the logical
  // shape at the shard's end, is left out.
  void add_lines(std::vector<SquaresLine<T>>& lines, std::size_t i, const StoredLayout& layout,
                 const FactoredTensor<T>& f, std::size_t shard_rows, const Matrix<T>& value,
                 const Matrix<T>& grad, bool factored) {
    const std::size_t sc = f.shard_cols, first = f.first, end = first + elements(value);
    const auto logical = [&](std::size_t r, std::size_t c, std::size_t& row, std::size_t& col) {
      layout.logical(r, c, row, col);
      return row < f.rows && col < f.cols;
    };
    std::size_t real_rows = 0, real_cols = 0, row = 0, col = 0;
    while (real_rows < shard_rows && logical(real_rows, 0, row, col)) ++real_rows;
    while (real_cols < sc && logical(0, real_cols, row, col)) ++real_cols;
    const auto slot = [&](std::size_t r, std::size_t c, bool stored_row) {
      logical(r, c, row, col);
      return stored_row != layout.transposed ? f.sums + row : f.sums + f.rows + col;
    };
    for (std::size_t r = first / sc; r < real_rows && r * sc < end; ++r) {  // stored rows
      const std::size_t from = std::max(first, r * sc), to = std::min(end, r * sc + real_cols);
      if (from >= to) continue;
      const auto count = static_cast<std::uint32_t>(to - from);
      add_line(lines, {value.data() + (from - first), 1, count}, i, false);
      if (factored)
        add_line(lines, {grad.data() + (from - first), 1, count}, slot(r, from - r * sc, true),
                 true);
    }
    if (!factored) return;
    for (std::size_t c = 0; c < real_cols; ++c) {  // stored columns: first <= r sc + c < end
      const std::size_t top = first > c ? (first - c + sc - 1) / sc : 0;
      if (top * sc + c >= end || top >= real_rows) continue;
      const std::size_t bottom = std::min((end - 1 - c) / sc, real_rows - 1);
      add_line(lines,
               {grad.data() + (top * sc + c - first), sc,
                static_cast<std::uint32_t>(bottom - top + 1)},
               slot(top, c, false), true);
    }
  }

  // p's stored rows' logical lines, then its stored columns' (FactoredTensor's tables).
  static void add_stored_lines(std::vector<std::uint32_t>& out, const Parameter<T>& p) {
    const std::size_t shard_rows = p.value.extent(0), shard_cols = p.value.extent(1);
    MESHSLICE_ASSERT(elements(p.value) < FactoredTensor<T>::kPadding &&
                         p.global.rows < FactoredTensor<T>::kPadding &&
                         p.global.cols < FactoredTensor<T>::kPadding,
                     "FactoredStep: ", p.name, "'s shard, rows or columns number 2^32 - 1 or more");
    // The line of a stored row, or column, and whether it is within the logical shape.
    const auto line = [&](std::size_t r, std::size_t c, bool stored_row) {
      std::size_t row = 0, col = 0;
      p.layout.logical(r, c, row, col);
      const bool of_rows = stored_row != p.layout.transposed;  // a logical row's line
      const std::size_t index = of_rows ? row : col, end = of_rows ? p.global.rows : p.global.cols;
      return index < end ? static_cast<std::uint32_t>(index) : FactoredTensor<T>::kPadding;
    };
    for (std::size_t r = 0; r < shard_rows; ++r) out.push_back(line(r, 0, true));
    for (std::size_t c = 0; c < shard_cols; ++c) out.push_back(line(0, c, false));
  }

  void add_line(std::vector<SquaresLine<T>>& lines, const SquaresLine<T>& line, std::size_t slot,
                bool gradient) {
    lines.push_back(line);
    line_slots_.push_back(slot);
    line_of_gradient_.push_back(gradient);
  }

  template <class V>
  static Kokkos::View<V*, MemSpace> to_device(const char* label, const std::vector<V>& host) {
    Kokkos::View<V*, MemSpace> out(std::string(label), host.size());
    const auto mirror = Kokkos::create_mirror_view(out);
    for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
    Kokkos::deep_copy(out, mirror);
    return out;
  }

  Exec& ex_;
  const ParameterSet<T>& params_;
  const Optimizer<T>& optimizer_;
  std::vector<double> elements_;           // each tensor's global elements
  std::vector<bool> counts_;               // whether this rank counts each tensor in the sums
  std::vector<bool> factored_;             // whether each tensor keeps factors
  std::vector<std::size_t> factor_slots_;  // where each tensor's factors' squares start
  double update_elements_ = 0;
  std::vector<double> host_sums_;    // each tensor's weight squares, then its factors' squares
  std::vector<double> tensor_sums_;  // each tensor's U^2
  MultiTensorChunks<T> chunks_;
  std::vector<std::size_t> chunk_tensor_;
  std::vector<std::size_t> line_slots_;
  std::vector<bool> line_of_gradient_;
  Kokkos::View<FactoredTensor<T>*, MemSpace> tensors_;
  Kokkos::View<SquaresLine<T>*, MemSpace> lines_;
  Kokkos::View<std::uint32_t*, MemSpace> stored_lines_;
  Kokkos::View<double*, MemSpace> line_sums_, sums_, chunk_sums_;
  typename Kokkos::View<double*, MemSpace>::HostMirror host_line_sums_, host_chunk_sums_;
  Kokkos::View<T*, MemSpace> inverse_row_means_, steps_;
  typename Kokkos::View<T*, MemSpace>::HostMirror host_steps_;
};

}  // namespace meshslice
