#pragma once
// Cross-entropy over logits whose vocabulary is split over mesh columns: each chip holds, for
// its tokens, a contiguous block of the (padded) vocabulary's logits, so the softmax's row
// maximum and sum of exponentials are partial results the caller reduces over the axis that
// splits the vocabulary, between the kernels:
//
//   vocab_row_max(logits, valid, max);                        max-reduce `max` over the axis
//   vocab_exp_sums(logits, valid, first, targets, max, sums); sum-reduce `sums` over the axis
//   loss = cross_entropy_gradient(logits, valid, first, targets, max, sums, scale)
//
// `valid` of the block's columns are real vocabulary entries, the rest padding (Megatron's
// make-vocab-size-divisible-by): they never count in the softmax, so a padded entry can never be
// predicted, and their gradient is zero. `first` is the block's first vocabulary id. The target's
// logit is taken by the chip that holds it (the others add 0). vocab_exp_sums leaves each
// exponential in place of its logit, so the gradient, which then replaces them in place with
// scale * (softmax - one_hot(target)), computes no exponential again (the vocabulary's passes are
// the largest non-GEMM work of a language model's step).
#include <cstddef>
#include <limits>

#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/rows.hpp"
#include "model/kernels/token_ids.hpp"

namespace meshslice {

// row_max(t, 0) = the largest of this block's valid logits of token t; the lowest finite value
// where the block holds padding only (the reduction over the axis then gives the real maximum).
template <class T>
void vocab_row_max(const ExecSpace& space, const Matrix<T>& logits, std::size_t valid,
                   const Matrix<T>& row_max) {
  const T lowest = std::numeric_limits<T>::lowest();
  for_each_row(
      "vocab_row_max", space, logits.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        // A row's elements are contiguous (row-major).
        const T max = row_fold(row, valid, lowest, RowValues<T>{&logits(t, 0)}, FoldMax());
        row_single(row, [&]() { row_max(t, 0) = max; });
      });
}

// sums(t, 0) = sum over this block's valid logits of exp(logit - max(t)) (core/fast_exp.hpp, as
// attention's softmax), each exponential left in place of its logit; sums(t, 1) = the target's
// logit where this block holds the target, else 0.
template <class T>
void vocab_exp_sums(const ExecSpace& space, const Matrix<T>& logits, std::size_t valid,
                    std::size_t first, const TokenIds& targets, const Matrix<T>& row_max,
                    const Matrix<T>& sums) {
  for_each_row(
      "vocab_exp_sums", space, logits.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        const std::size_t target = static_cast<std::size_t>(targets(t));
        // Read before the fold overwrites the logits with their exponentials.
        const T target_logit =
            target >= first && target < first + valid ? logits(t, target - first) : T(0);
        row.team_barrier();
        const T sum =
            row_fold(row, valid, T(0), ExpInPlace<T>{&logits(t, 0), row_max(t, 0)}, FoldSum());
        row_single(row, [&]() {
          sums(t, 1) = target_logit;
          sums(t, 0) = sum;
        });
      });
}

// The sum over this chip's tokens of -log softmax(target) = log(sum exp) + max - target logit
// (every chip of the axis returns the same sum), and the exponentials vocab_exp_sums left in
// `logits` replaced by the logits' gradient scale * (softmax - one_hot(target)), padding 0.
template <class T>
double cross_entropy_gradient(const ExecSpace& space, const Matrix<T>& logits, std::size_t valid,
                              std::size_t first, const TokenIds& targets, const Matrix<T>& row_max,
                              const Matrix<T>& sums, double scale) {
  const std::size_t cols = logits.extent(1);
  const T s = static_cast<T>(scale);
  double loss = 0;
  Kokkos::parallel_reduce(
      "cross_entropy_loss", Kokkos::RangePolicy<ExecSpace>(space, 0, logits.extent(0)),
      KOKKOS_LAMBDA(std::size_t t, double& total) {
        total += static_cast<double>(kmath::log(sums(t, 0)) + row_max(t, 0) - sums(t, 1));
      },
      loss);
  for_each_row(
      "cross_entropy_gradient", space, logits.extent(0), KOKKOS_LAMBDA(const RowMember& row) {
        const std::size_t t = row.league_rank();
        T* values = &logits(t, 0);
        const T to_gradient = s / sums(t, 0);  // exp -> scale * softmax
        row_for(row, valid, [&](std::size_t c) { values[c] *= to_gradient; });
        row_for(row, cols - valid, [&](std::size_t c) { values[valid + c] = T(0); });
        // The target's element after the team's writes to the row.
        row.team_barrier();
        const std::size_t target = static_cast<std::size_t>(targets(t));
        if (target >= first && target < first + valid)
          row_single(row, [&]() { values[target - first] -= s; });
      });
  return loss;
}

}  // namespace meshslice
