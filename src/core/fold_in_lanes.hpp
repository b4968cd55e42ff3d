#pragma once
// A fold (a sum, a maximum) along a contiguous run in kFoldLanes independent partial results,
// for the kernels that reduce long rows: a chip's logits in the vocabulary's softmax, attention's
// scores, the gradients in the global norm. With one accumulator every step waits for the one
// before, and a compiler may not reorder floating-point folds to vectorize the loop itself; with
// independent lanes it does, and the loop runs at memory speed (the softmax's row maximum and
// the gradient norm took 3-4x longer with one). The order of the terms is fixed, so the result is the same
// on every run. Terms and folds are function objects, not lambdas: nvcc compiles a lambda
// written inside a kernel's lambda for the host only.
//
//     double sum = fold_in_lanes(n, 0.0, RowSquares<float, double>{row}, FoldSum());
#include <cstddef>

#include "core/fast_exp.hpp"
#include "core/kokkos_compat.hpp"

namespace meshslice {

constexpr std::size_t kFoldLanes = 16;

struct FoldSum {
  template <class A>
  KOKKOS_INLINE_FUNCTION A operator()(A a, A b) const {
    return a + b;
  }
};
struct FoldMax {
  template <class A>
  KOKKOS_INLINE_FUNCTION A operator()(A a, A b) const {
    return b > a ? b : a;
  }
};

// Terms: a row's values, their squares in Acc, and exp(value - shift) left in place of each
// value (a softmax's numerators, core/fast_exp.hpp).
template <class T>
struct RowValues {
  const T* row;
  KOKKOS_INLINE_FUNCTION T operator()(std::size_t i) const { return row[i]; }
};
template <class T, class Acc = T>
struct RowSquares {
  const T* row;
  KOKKOS_INLINE_FUNCTION Acc operator()(std::size_t i) const {
    const Acc v = static_cast<Acc>(row[i]);
    return v * v;
  }
};
template <class T>
struct ExpInPlace {
  T* row;
  T shift;
  KOKKOS_INLINE_FUNCTION T operator()(std::size_t i) const {
    const T e = kmath::fast_exp(row[i] - shift);
    row[i] = e;
    return e;
  }
};

// fold over term(0) .. term(n - 1) from init: term i goes to lane i % kFoldLanes (the tail past
// the last whole group to lane 0), then the lanes fold pairwise.
template <class Acc, class Term, class Fold>
KOKKOS_INLINE_FUNCTION Acc fold_in_lanes(std::size_t n, Acc init, const Term& term,
                                         const Fold& fold) {
  Acc lane[kFoldLanes];
  for (std::size_t k = 0; k < kFoldLanes; ++k) lane[k] = init;
  std::size_t i = 0;
  for (; i + kFoldLanes <= n; i += kFoldLanes)
    for (std::size_t k = 0; k < kFoldLanes; ++k) lane[k] = fold(lane[k], term(i + k));
  for (; i < n; ++i) lane[0] = fold(lane[0], term(i));
  for (std::size_t width = kFoldLanes / 2; width > 0; width /= 2)
    for (std::size_t k = 0; k < width; ++k) lane[k] = fold(lane[k], lane[k + width]);
  return lane[0];
}

}  // namespace meshslice
