#pragma once
// The element-by-element kernels of the training step: initialisation, the MLP's activation,
// residual adds, the loss, sums of squares and the optimizers' updates. Every one runs on the
// caller's execution space instance, on shards of any layout.
#include <cstddef>
#include <cstdint>

#include "block/mlp_activations.hpp"
#include "core/bfloat16.hpp"
#include "core/fold_in_lanes.hpp"
#include "core/kokkos_types.hpp"
#include "model/model_math.hpp"
#include "parameters/parameter_layout.hpp"

namespace meshslice {

// The elements of an R x C shard as a 2D range: no index arithmetic per element (a division
// costs more than the kernels' arithmetic), rows outer so a CPU walks the row-major shards in
// order and a GPU's threads take neighbouring columns.
using ElementRange =
    Kokkos::MDRangePolicy<ExecSpace,
                          Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;

inline ElementRange element_range(const ExecSpace& space, std::size_t rows, std::size_t cols) {
  using Index = ElementRange::index_type;
  return ElementRange(space, {Index(0), Index(0)},
                      {static_cast<Index>(rows), static_cast<Index>(cols)});
}

// Runs f(r, c) for every element of an R x C shard.
template <class F>
void for_each_element(const char* name, const ExecSpace& space, std::size_t rows, std::size_t cols,
                      const F& f) {
  Kokkos::parallel_for(name, element_range(space, rows, cols), f);
}

// A parameter shard's initial values (model_math.hpp's init_value of its logical elements).
template <class T>
void fill_parameter(const ExecSpace& space, const Matrix<T>& shard, const StoredLayout& layout,
                    std::uint64_t seed, std::uint64_t stream, double std_dev) {
  for_each_element(
      "init_parameter", space, shard.extent(0), shard.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        std::size_t row = 0, col = 0;
        layout.logical(r, c, row, col);
        shard(r, c) = static_cast<T>(init_value(seed, stream, std_dev, row, col));
      });
}

// Inputs in the standard layout: shard element (r, c) is token token0 + r, hidden col0 + c.
template <class T>
void fill_inputs(const ExecSpace& space, const Matrix<T>& x, std::uint64_t seed,
                 std::uint64_t stream, std::size_t token0, std::size_t col0) {
  for_each_element(
      "init_inputs", space, x.extent(0), x.extent(1), KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        x(r, c) = static_cast<T>(counter_normal(seed, stream, token0 + r, col0 + c));
      });
}

// The MLP's activation (block/mlp_activations.hpp) on FF1's output: z = act(u), or for a gated
// one z = act(gate) * up. z's elements may be bf16 (FF2's input kept in bf16: rounded as they
// are written). With `kept` (FF1's output kept in bf16, a bf16 run): FF1's output rounded to
// bf16 first, kept there for the backward pass and the value the activation takes, as
// autocast's bf16 linear output is.
template <class MlpActivation, class T, class Z>
void activation_forward(const ExecSpace& space, const Matrix<T>& u, const Matrix<Z>& z,
                        const Matrix<bfloat16>& kept = {}) {
  if (!kept.data()) {
    for_each_element(
        MlpActivation::name, space, u.extent(0), u.extent(1),
        KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
          z(r, c) = element_cast<Z>(MlpActivation::value(u(r, c)));
        });
    return;
  }
  for_each_element(
      MlpActivation::name, space, u.extent(0), u.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        // Rounded there and back, and kept rounded again (exact): GCC 12 vectorizes this order;
        // keeping the first rounding's bf16 ran 8x slower (2026-11-29).
        const T rounded = element_cast<T>(element_cast<bfloat16>(u(r, c)));
        z(r, c) = element_cast<Z>(MlpActivation::value(rounded));
        kept(r, c) = element_cast<bfloat16>(rounded);
      });
}

// du = dz * act'(u), in place of dz (u's elements T, or bf16 where FF1's output is kept so).
template <class MlpActivation, class U, class T>
void activation_backward(const ExecSpace& space, const Matrix<U>& u, const Matrix<T>& dz) {
  for_each_element(
      backward_label<MlpActivation>(), space, u.extent(0), u.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        dz(r, c) *= MlpActivation::derivative(element_cast<T>(u(r, c)));
      });
}

// A gated activation on FF1's output y, whose chip block holds its features' gate and then their
// up projection (parameters/parameter_layout.hpp), along its columns (the standard layout) or
// rows (transposed): z = act(gate) * up, z the chip's block of those features in the same layout
// (its elements and `kept` as activation_forward's, kept in y's layout).
template <class MlpActivation, class T, class Z>
void gated_forward(const ExecSpace& space, const Matrix<T>& y, const Matrix<Z>& z,
                   bool features_in_rows, const Matrix<bfloat16>& kept = {}) {
  const std::size_t dr = features_in_rows ? z.extent(0) : 0,
                    dc = features_in_rows ? 0 : z.extent(1);
  if (!kept.data()) {
    for_each_element(
        MlpActivation::name, space, z.extent(0), z.extent(1),
        KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
          z(r, c) = element_cast<Z>(MlpActivation::value(y(r, c)) * y(r + dr, c + dc));
        });
    return;
  }
  for_each_element(
      MlpActivation::name, space, z.extent(0), z.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        const T gate = element_cast<T>(element_cast<bfloat16>(y(r, c))),  // as the ungated
            up = element_cast<T>(element_cast<bfloat16>(y(r + dr, c + dc)));
        z(r, c) = element_cast<Z>(MlpActivation::value(gate) * up);
        kept(r, c) = element_cast<bfloat16>(gate);
        kept(r + dr, c + dc) = element_cast<bfloat16>(up);
      });
}

// dy, the gradient of y (gate and up as in y; y's elements T, or bf16 as the ungated u), from
// dz: d gate = dz up act'(gate), d up = dz act(gate).
template <class MlpActivation, class Y, class T>
void gated_backward(const ExecSpace& space, const Matrix<Y>& y, const Matrix<T>& dz,
                    const Matrix<T>& dy, bool features_in_rows) {
  const std::size_t dr = features_in_rows ? dz.extent(0) : 0,
                    dc = features_in_rows ? 0 : dz.extent(1);
  for_each_element(
      backward_label<MlpActivation>(), space, dz.extent(0), dz.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        const T gate = element_cast<T>(y(r, c)), up = element_cast<T>(y(r + dr, c + dc));
        dy(r, c) = dz(r, c) * (up * MlpActivation::derivative(gate));
        dy(r + dr, c + dc) = dz(r, c) * MlpActivation::value(gate);
      });
}

// x += y (the residual stream).
template <class T>
void add_into(const ExecSpace& space, const Matrix<T>& x, const Matrix<T>& y) {
  for_each_element(
      "residual_add", space, x.extent(0), x.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) { x(r, c) += y(r, c); });
}

// Sum of squares of a shard, in double: each row in runs of kSquareRun columns (a GPU's threads
// take the runs), each run folded in lanes (core/fold_in_lanes.hpp) so a CPU vectorizes it.
constexpr std::size_t kSquareRun = 256;

template <class T>
double sum_squares(const ExecSpace& space, const Matrix<T>& x) {
  const std::size_t cols = x.extent(1), runs = (cols + kSquareRun - 1) / kSquareRun;
  double sum = 0;
  Kokkos::parallel_reduce(
      "sum_squares", element_range(space, x.extent(0), runs),
      KOKKOS_LAMBDA(std::size_t r, std::size_t run, double& acc) {
        const std::size_t c0 = run * kSquareRun;
        const std::size_t n = cols - c0 < kSquareRun ? cols - c0 : kSquareRun;
        acc += fold_in_lanes(n, 0.0, RowSquares<T, double>{&x(r, c0)}, FoldSum());
      },
      sum);
  return sum;
}

// The squared error's sum over the shard, and its gradient dy = factor (y - target).
template <class T>
double squared_error(const ExecSpace& space, const Matrix<T>& y, const Matrix<T>& target,
                     double factor, const Matrix<T>& dy) {
  const T f = static_cast<T>(factor);
  double sum = 0;
  Kokkos::parallel_reduce(
      "squared_error", element_range(space, y.extent(0), y.extent(1)),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c, double& acc) {
        const T diff = y(r, c) - target(r, c);
        dy(r, c) = f * diff;
        acc += static_cast<double>(diff) * static_cast<double>(diff);
      },
      sum);
  return sum;
}

}  // namespace meshslice
