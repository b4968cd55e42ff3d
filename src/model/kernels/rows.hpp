#pragma once
// Kernels that work row by row on row-major shards (the norms, the vocabulary's softmax and
// cross-entropy): one launch over all rows, the work inside a row shared the way each backend
// wants it.
//   - On a GPU a team of threads takes a row: neighbouring threads read neighbouring elements of
//     it, and a row's fold (a sum, a maximum) is the team's reduction. A thread per row would
//     give a step of a few thousand tokens a few thousand threads reading a cache line each.
//   - On a CPU a thread takes a row and walks it in order, folding in lanes (fold_in_lanes) so
//     the loop vectorizes.
//
//     for_each_row("rmsnorm_sum_squares", space, rows, KOKKOS_LAMBDA(const RowMember& row) {
//       const std::size_t t = row.league_rank();
//       const T sum = row_fold(row, cols, T(0), RowSquares<T>{&x(t, 0)}, FoldSum());
//       row_single(row, [&]() { ss(t, 0) = sum; });
//     });
#include <cstddef>

#include "core/fold_in_lanes.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

using RowPolicy = Kokkos::TeamPolicy<ExecSpace>;
using RowMember = RowPolicy::member_type;

// Whether the execution space runs on the host (a row to a thread) or on a device (to a team).
constexpr bool kRowPerThread = kRunsOnHost;

// f(row) for each of `rows` rows, row.league_rank() being the row's index.
template <class F>
void for_each_row(const char* name, const ExecSpace& space, std::size_t rows, const F& f) {
  const RowPolicy policy = kRowPerThread ? RowPolicy(space, static_cast<int>(rows), 1)
                                         : RowPolicy(space, static_cast<int>(rows), Kokkos::AUTO);
  Kokkos::parallel_for(name, policy, f);
}

// The reduction of the team that matches a fold.
template <class Fold, class Acc>
struct TeamReducer;
template <class Acc>
struct TeamReducer<FoldSum, Acc> {
  using type = Kokkos::Sum<Acc>;
};
template <class Acc>
struct TeamReducer<FoldMax, Acc> {
  using type = Kokkos::Max<Acc>;
};

// fold over term(0) .. term(n - 1) from init, the result in every thread of the row's team.
// Each term is taken once (a term may write in place, as ExpInPlace does).
template <class Acc, class Term, class Fold>
KOKKOS_INLINE_FUNCTION Acc row_fold(const RowMember& row, std::size_t n, Acc init, const Term& term,
                                    const Fold& fold) {
  if constexpr (kRowPerThread) {
    (void)row;
    return fold_in_lanes(n, init, term, fold);
  } else {
    Acc result = init;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(row, n), [&](std::size_t i, Acc& acc) { acc = fold(acc, term(i)); },
        typename TeamReducer<Fold, Acc>::type(result));
    return fold(init, result);
  }
}

// f(i) for i in [0, n), spread over the row's team.
template <class F>
KOKKOS_INLINE_FUNCTION void row_for(const RowMember& row, std::size_t n, const F& f) {
  if constexpr (kRowPerThread) {
    (void)row;
    for (std::size_t i = 0; i < n; ++i) f(i);
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(row, n), f);
  }
}

// Waits until every thread of the row's team is here: what one wrote in a row_fold or row_for
// (an exponential in place) is then seen by the others. A thread alone has nothing to wait for.
KOKKOS_INLINE_FUNCTION void row_barrier(const RowMember& row) {
  if constexpr (!kRowPerThread) row.team_barrier();
  (void)row;
}

// f() once for the row (the write of a row's result).
template <class F>
KOKKOS_INLINE_FUNCTION void row_single(const RowMember& row, const F& f) {
  Kokkos::single(Kokkos::PerTeam(row), f);
}

}  // namespace meshslice
