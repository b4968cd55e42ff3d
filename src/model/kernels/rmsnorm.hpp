#pragma once
// RMSNorm on a shard whose hidden dimension is split over mesh columns: h = x / rms(x) * g with
// rms over the whole hidden dimension, so the per-token sums of squares (forward) and the
// per-token dot product of the backward pass are partial sums the caller all-reduces over the
// axis that splits hidden, between the two kernels of each pass.
//
//   forward:   row_sum_squares(x, ss); all-reduce ss; rmsnorm_apply(x, ss, g, H, rinv, h)
//   backward:  rmsnorm_backward_partials(dh, x, g, rinv, dot, dg, tiles); all-reduce dot
//              (hidden axis) and dg (token axis); rmsnorm_backward_apply(dh, x, g, rinv, dot, H, dx)
#include <cstddef>

#include "core/fold_in_lanes.hpp"
#include "core/host_vectors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/rows.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// The terms of the backward pass's per-token dot product: g(c) dh(t, c) x(t, c).
template <class T>
struct GainDotTerms {
  const T* g;
  const T* dh;
  const T* x;
  KOKKOS_INLINE_FUNCTION T operator()(std::size_t c) const { return g[c] * dh[c] * x[c]; }
#if MESHSLICE_HOST_VECTOR_FOLDS
  template <class U = T>  // a register's worth of terms from c (core/fold_in_lanes.hpp)
  HostVector<U> lanes(std::size_t c) const {
    return load_vector(g + c) * load_vector(dh + c) * load_vector(x + c);
  }
#endif
};

// ss(t, 0) = sum over this shard's columns of x(t, c)^2.
template <class T>
void row_sum_squares(const ExecSpace& space, const Matrix<T>& x, const Matrix<T>& ss) {
  const std::size_t cols = x.extent(1);
  for_each_row(
      "rmsnorm_sum_squares", space, x.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        const T sum = row_fold(row, cols, T(0), RowSquares<T>{&x(t, 0)}, FoldSum());
        row_single(row, [&]() { ss(t, 0) = sum; });
      });
}

// rinv(t) = 1 / sqrt(ss(t) / H + eps);  h = x * rinv * g (g: 1 x this shard's columns; h's
// elements T or bf16, rounded once written).
template <class T, class H>
void rmsnorm_apply(const ExecSpace& space, const Matrix<T>& x, const Matrix<T>& ss,
                   const Matrix<T>& g, std::size_t hidden, const Matrix<T>& rinv,
                   const Matrix<H>& h) {
  const std::size_t cols = x.extent(1);
  const T inv_hidden = T(1) / static_cast<T>(hidden), eps = static_cast<T>(kRmsNormEpsilon);
  for_each_row(
      "rmsnorm_apply", space, x.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        const T r = T(1) / kmath::sqrt(ss(t, 0) * inv_hidden + eps);
        row_single(row, [&]() { rinv(t, 0) = r; });
        row_for(row, cols,
                [&](std::size_t c) { h(t, c) = element_cast<H>(x(t, c) * r * g(0, c)); });
      });
}

// The gain gradient is a sum down the columns of row-major shards: each tile of this many rows
// is summed first, walking its rows in order (on a GPU, threads take neighbouring columns),
// then the tiles' sums. A column walked whole would touch a cache line per element.
constexpr std::size_t kGainTileRows = 32;
inline std::size_t gain_tiles(std::size_t rows) {
  return (rows + kGainTileRows - 1) / kGainTileRows;
}

// The backward pass's partial sums: dot(t) = sum_c g dh x over this shard's columns, and the
// gain gradient over this shard's tokens, dg(c) = sum_t dh x rinv. `tiles`:
// gain_tiles(rows) x cols of work space.
template <class T>
void rmsnorm_backward_partials(const ExecSpace& space, const Matrix<T>& dh, const Matrix<T>& x,
                               const Matrix<T>& g, const Matrix<T>& rinv, const Matrix<T>& dot,
                               const Matrix<T>& dg, const Matrix<T>& tiles) {
  const std::size_t rows = x.extent(0), cols = x.extent(1);
  for_each_row(
      "rmsnorm_backward_dot", space, rows, KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        const T sum =
            row_fold(row, cols, T(0), GainDotTerms<T>{&g(0, 0), &dh(t, 0), &x(t, 0)}, FoldSum());
        row_single(row, [&]() { dot(t, 0) = sum; });
      });
  const std::size_t count = gain_tiles(rows);
  Kokkos::parallel_for(
      "rmsnorm_backward_gain_tiles", element_range(space, count, cols),
      KOKKOS_LAMBDA(std::size_t tile, std::size_t c) {
        const std::size_t end =
            (tile + 1) * kGainTileRows < rows ? (tile + 1) * kGainTileRows : rows;
        T sum = 0;
        for (std::size_t t = tile * kGainTileRows; t < end; ++t)
          sum += dh(t, c) * x(t, c) * rinv(t, 0);
        tiles(tile, c) = sum;
      });
  Kokkos::parallel_for(
      "rmsnorm_backward_gain", Kokkos::RangePolicy<ExecSpace>(space, 0, cols),
      KOKKOS_LAMBDA(std::size_t c) {
        T sum = 0;
        for (std::size_t tile = 0; tile < count; ++tile) sum += tiles(tile, c);
        dg(0, c) = sum;
      });
}

// dx += rinv g dh - x rinv^3 dot / H: the input gradient, added to what dx holds (the residual
// stream's gradient).
template <class T>
void rmsnorm_backward_apply(const ExecSpace& space, const Matrix<T>& dh, const Matrix<T>& x,
                            const Matrix<T>& g, const Matrix<T>& rinv, const Matrix<T>& dot,
                            std::size_t hidden, const Matrix<T>& dx) {
  const std::size_t cols = x.extent(1);
  const T inv_hidden = T(1) / static_cast<T>(hidden);
  for_each_row(
      "rmsnorm_backward_apply", space, x.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        const T r = rinv(t, 0), k = r * r * r * dot(t, 0) * inv_hidden;
        row_for(row, cols,
                [&](std::size_t c) { dx(t, c) += r * g(0, c) * dh(t, c) - x(t, c) * k; });
      });
}

}  // namespace meshslice
