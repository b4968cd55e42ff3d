#pragma once
// SGD with momentum, PyTorch's form: v = momentum v + g; w -= lr v. No weight decay.
#include "parameters/optimizers/update_step.hpp"

namespace meshslice {

struct Sgd {
  static const OptimizerInfo& info() {
    static const OptimizerInfo i{"sgd",
                                 "SGD with momentum",
                                 {"momentum"},
                                 {{"momentum", 0.9, 0, 1, "the velocity's decay"}}};
    return i;
  }
  struct Scalars {
    double lr, grad_scale, momentum;
  };
  static Scalars scalars(const OptimizerSettings& o, const UpdateStep& s) {
    return {s.lr, s.grad_scale, o.value("momentum")};
  }
  template <class T, class State>
  KOKKOS_INLINE_FUNCTION static void update(const Scalars& u, T& w, T grad, const State& state) {
    T& velocity = state[0];
    velocity = T(u.momentum) * velocity + grad * T(u.grad_scale);
    w -= T(u.lr) * velocity;
  }
};

}  // namespace meshslice
