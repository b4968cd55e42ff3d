#pragma once
// A fold (a sum, a maximum) along a contiguous run in kFoldLanes independent partial results,
// for the kernels that reduce long rows: a chip's logits in the vocabulary's softmax, attention's
// scores, the gradients in the global norm. With one accumulator every step waits for the one
// before, and a compiler may not reorder floating-point folds to vectorize the loop itself. With
// independent lanes it may, but GCC 12 kept them in scalar registers, one term a cycle; so on a
// host compiler the lanes are vector registers (core/host_vectors.hpp) wherever the term can
// give a register's worth of terms at once (its lanes(i) member), and the loop runs at memory
// speed (bench-lm's softmax row maximum took 2.4x as long in scalar lanes, its exponentials
// 2.6x). Either way term i goes to lane i % kFoldLanes in order, so the result has the same bits
// on every run, and in either form unless the compiler fuses a term's product into the fold's
// add in one form and not the other: GCC does as it sees fit on an FMA machine (-march=native),
// and a three-factor term's sum then differs by about a rounding a term (test_fold_in_lanes).
// Terms and folds are function objects, not lambdas: nvcc compiles a lambda written inside a
// kernel's lambda for the host only.
//
//     double sum = fold_in_lanes(n, 0.0, RowSquares<float, double>{row}, FoldSum());
#include <cstddef>
#include <type_traits>
#include <utility>

#include "core/fast_exp.hpp"
#include "core/host_vectors.hpp"
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
#if MESHSLICE_HOST_VECTOR_FOLDS
  template <class U = T>                      // a template: a type without vectors gets no lanes
  HostVector<U> lanes(std::size_t i) const {  // a register's worth of terms from i
    return load_vector(row + i);
  }
#endif
};
template <class T, class Acc = T>
struct RowSquares {
  const T* row;
  KOKKOS_INLINE_FUNCTION Acc operator()(std::size_t i) const {
    const Acc v = static_cast<Acc>(row[i]);
    return v * v;
  }
#if MESHSLICE_HOST_VECTOR_FOLDS
  template <class U = Acc>
  HostVector<U> lanes(std::size_t i) const {
    const auto v =
        __builtin_convertvector(load_vector<T, kHostVectorLanes<U>>(row + i), HostVector<U>);
    return v * v;
  }
#endif
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
#if MESHSLICE_HOST_VECTOR_FOLDS
  // float only: fast_exp has lanes for float (double's exp is the library's, a call per term).
  template <class U = T, class = std::enable_if_t<std::is_same_v<U, float>>>
  HostVector<U> lanes(std::size_t i) const {
    const HostVector<U> e = kmath::fast_exp(load_vector(row + i) - shift);
    store_vector(row + i, e);
    return e;
  }
#endif
};

#if MESHSLICE_HOST_VECTOR_FOLDS
// Whether Term gives a register's worth of terms at once, as a vector of Acc (a member
// lanes(i): terms i, i + 1, ...). Asked through the element's type: a vector type as a template
// argument loses its alignment attribute, and GCC warns.
template <class Term>
using LanesElement = std::decay_t<decltype(std::declval<const Term&>().lanes(std::size_t{})[0])>;
template <class Term, class Acc, class = void>
struct GivesLanes : std::false_type {};
template <class Term, class Acc>
struct GivesLanes<Term, Acc, std::void_t<LanesElement<Term>>>
    : std::is_same<LanesElement<Term>, Acc> {};
#endif

// fold over term(0) .. term(n - 1) from init: term i goes to lane i % kFoldLanes (the tail past
// the last whole group to lane 0), then the lanes fold pairwise.
template <class Acc, class Term, class Fold>
KOKKOS_INLINE_FUNCTION Acc fold_in_lanes(std::size_t n, Acc init, const Term& term,
                                         const Fold& fold) {
  Acc lane[kFoldLanes];
  std::size_t i = 0;
#if MESHSLICE_HOST_VECTOR_FOLDS
  if constexpr (GivesLanes<Term, Acc>::value) {
    // The lanes as `groups` registers: lane g * width + k is register g's element k.
    constexpr std::size_t width = kHostVectorLanes<Acc>, groups = kFoldLanes / width;
    static_assert(groups * width == kFoldLanes, "a fold's lanes fill whole registers");
    HostVector<Acc> lanes[groups];
    for (std::size_t g = 0; g < groups; ++g) lanes[g] = filled_vector(init);
    for (; i + kFoldLanes <= n; i += kFoldLanes)
      for (std::size_t g = 0; g < groups; ++g) lanes[g] = fold(lanes[g], term.lanes(i + g * width));
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t k = 0; k < width; ++k) lane[g * width + k] = lanes[g][k];
  } else
#endif
  {
    for (std::size_t k = 0; k < kFoldLanes; ++k) lane[k] = init;
    for (; i + kFoldLanes <= n; i += kFoldLanes)
      for (std::size_t k = 0; k < kFoldLanes; ++k) lane[k] = fold(lane[k], term(i + k));
  }
  for (; i < n; ++i) lane[0] = fold(lane[0], term(i));
  for (std::size_t width = kFoldLanes / 2; width > 0; width /= 2)
    for (std::size_t k = 0; k < width; ++k) lane[k] = fold(lane[k], lane[k + width]);
  return lane[0];
}

}  // namespace meshslice
