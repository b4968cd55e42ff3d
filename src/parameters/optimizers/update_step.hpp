#pragma once
// What an optimizer descriptor (optimizers/adamw.hpp and its siblings) is built from. Each is a
// struct with
//   static const OptimizerInfo& info();           // name, state tensors, deck keys
//   struct Scalars;                               // a step's constants, made once on the host
//   static Scalars scalars(const OptimizerSettings&, const UpdateStep&);
//   template <class T, class State>               // one element; state[k] is its k-th state
//   KOKKOS_INLINE_FUNCTION static void update(const Scalars&, T& w, T grad, const State& state);
// A factored descriptor (optimizers/adafactor.hpp) has `static constexpr bool factored = true`
// and, in place of that `update`, the formulas of a step that sums over whole tensors
// (parameters/factored_step.hpp runs it).
// `update` is the one formula: the distributed step runs it on the device over every parameter
// in one launch (parameters/optimizer.hpp), the serial reference on the host (reference_kernels.hpp).
// Updates run in T: float runs update in float, as PyTorch does, and vectorize; the reference
// tests run in double.
#include <cstddef>
#include <type_traits>

#include "core/kokkos_compat.hpp"
#include "parameters/optimizers/optimizer_settings.hpp"

namespace meshslice {

// A step's facts every optimizer starts from.
struct UpdateStep {
  double lr = 0;          // this step's learning rate (the schedule's)
  std::size_t t = 1;      // the step, from 1
  double grad_scale = 1;  // the clipping factor the gradients are multiplied by
  bool decayed = false;   // a weight matrix (weight decay applies), not a norm's gain
};

// Keys several optimizers read: one default and range each, a doc per optimizer.
inline OptimizerKey beta1_key(const char* doc) { return {"beta1", 0.9, 0, 1, doc}; }
inline OptimizerKey beta2_key(const char* doc) { return {"beta2", 0.95, 0, 1, doc}; }
inline OptimizerKey weight_decay_key(const char* doc) {
  return {"weight_decay", 0.0, 0, kUnbounded, doc};
}

template <class T>
KOKKOS_INLINE_FUNCTION T sign_of(T x) {  // -1, 0 or 1
  return T((x > T(0)) - (x < T(0)));
}

// Adam's two moments of the (clipped) gradient g, as AdamW and NAdamW keep them: m its mean, v
// its square's, each an exponential average with decay beta1 and beta2.
template <class T>
KOKKOS_INLINE_FUNCTION void update_adam_moments(double beta1, double beta2, T g, T& m, T& v) {
  m = T(beta1) * m + T(1 - beta1) * g;
  v = T(beta2) * v + T(1 - beta2) * g * g;
}

// Whether descriptor D is factored (has `factored` true): its step is not element-wise.
template <class D, class = void>
struct IsFactored {
  static constexpr bool value = false;
};
template <class D>
struct IsFactored<D, std::void_t<decltype(D::factored)>> {
  static constexpr bool value = D::factored;
};

}  // namespace meshslice
