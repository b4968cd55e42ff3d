#pragma once
// Token embedding with the table's vocabulary split over mesh rows and its hidden dimension over
// mesh columns: a chip looks up, for every token of the replica's batch, the rows its block
// holds (zeros for the others), and the sum of those partial lookups over the mesh rows is the
// embedding. The backward pass adds each token's gradient row into the row of its id, in a
// fixed order per id (the tokens of one id in batch order): no atomics, so the same batch gives
// the same bits on every backend and thread count.
//
//   embedding_lookup(table, ids, first, partial)            then reduce-scatter over mesh rows
//   all-gather the gradient over mesh rows, then embedding_gradient(grad, by_id, dtable, acc)
#include <cstddef>

#include "core/kokkos_types.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/rows.hpp"
#include "model/kernels/token_ids.hpp"

namespace meshslice {

// The tokens of a batch grouped by id, for the ids of one vocabulary block: the positions of
// the tokens whose id is first + v are positions(offsets(v)) .. positions(offsets(v + 1) - 1),
// in batch order.
struct TokensById {
  Kokkos::View<int*, MemSpace> offsets;    // block rows + 1
  Kokkos::View<int*, MemSpace> positions;  // the batch's tokens of this block's ids
};

// partial(t, c) = table(ids(t) - first, c) where this block holds ids(t), else 0.
template <class T>
void embedding_lookup(const ExecSpace& space, const Matrix<T>& table, const TokenIds& ids,
                      std::size_t first, const Matrix<T>& partial) {
  const std::size_t rows = table.extent(0);
  for_each_element(
      "embedding_lookup", space, partial.extent(0), partial.extent(1),
      KOKKOS_LAMBDA(std::size_t t, std::size_t c) {
        const std::size_t id = static_cast<std::size_t>(ids(t));
        partial(t, c) = id >= first && id < first + rows ? table(id - first, c) : T(0);
      });
}

// dtable(v, c) = (dtable(v, c) if accumulate) + the sum of grad(t, c) over the tokens t of id
// first + v, in batch order. A row of the table per thread (CPU) or team (GPU), whose offsets
// are read once: by element, every element read its row's two offsets, and a CPU's loop over
// a row could not vectorize (a 32768-token vocabulary's table took 36 ms of a 4 s step for a
// table that is mostly rows no token has). Each element adds in the same order either way.
// A functor, not a lambda: nvcc's extended lambdas cannot first capture a variable in a
// constexpr-if branch.
template <class T>
struct EmbeddingGradientRows {
  Matrix<T> grad, dtable;
  Kokkos::View<int*, MemSpace> offsets, positions;
  bool accumulate = false;

  KOKKOS_INLINE_FUNCTION void operator()(const RowMember& row) const {
    const std::size_t v = row.league_rank(), cols = dtable.extent(1);
    const int first = offsets(v), last = offsets(v + 1);
    if (accumulate && first == last) return;  // no token of this id: the row stays
    if constexpr (kRowPerThread) {
      // The row's tokens one after another, each a pass over the row that vectorizes.
      if (!accumulate)
        for (std::size_t c = 0; c < cols; ++c) dtable(v, c) = T(0);
      for (int k = first; k < last; ++k) {
        const std::size_t t = static_cast<std::size_t>(positions(k));
        for (std::size_t c = 0; c < cols; ++c) dtable(v, c) += grad(t, c);
      }
    } else {
      row_for(row, cols, [&](std::size_t c) {
        T sum = accumulate ? dtable(v, c) : T(0);
        for (int k = first; k < last; ++k) sum += grad(static_cast<std::size_t>(positions(k)), c);
        dtable(v, c) = sum;
      });
    }
  }
};

template <class T>
void embedding_gradient(const ExecSpace& space, const Matrix<T>& grad, const TokensById& by_id,
                        const Matrix<T>& dtable, bool accumulate) {
  for_each_row("embedding_gradient", space, dtable.extent(0),
               EmbeddingGradientRows<T>{grad, dtable, by_id.offsets, by_id.positions, accumulate});
}

}  // namespace meshslice
