#pragma once
// Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms"): the sign of an
// interpolation of the momentum and the gradient, so every element moves by lr; one state
// tensor, half AdamW's. c = beta1 m + (1 - beta1) g; w -= lr (sign(c) + weight_decay w);
// m = beta2 m + (1 - beta2) g. The paper's defaults are beta1 0.9 and beta2 0.99, with a learning
// rate 3-10x smaller and a weight decay 3-10x larger than AdamW's.
#include "parameters/optimizers/update_step.hpp"

namespace meshslice {

struct Lion {
  static const OptimizerInfo& info() {
    static const OptimizerInfo i{
        "lion",
        "the sign of momentum and gradient, one state tensor (Chen et al.)",
        {"exp_avg"},
        {beta1_key("the momentum's share of the update's direction"),
         beta2_key("the momentum's decay (the paper's default: 0.99)"),
         weight_decay_key("decoupled weight decay of the weight matrices (not the norms' gains)")}};
    return i;
  }
  struct Scalars {
    double lr, grad_scale, beta1, beta2;
    double decay;  // lr * weight_decay for a weight matrix; 0 for a gain
  };
  static Scalars scalars(const OptimizerSettings& o, const UpdateStep& s) {
    return {s.lr, s.grad_scale, o.value("beta1"), o.value("beta2"),
            s.decayed ? s.lr * o.value("weight_decay") : 0.0};
  }
  template <class T, class State>
  KOKKOS_INLINE_FUNCTION static void update(const Scalars& u, T& w, T grad, const State& state) {
    T& m = state[0];
    const T g = grad * T(u.grad_scale);
    const T direction = sign_of(T(u.beta1) * m + T(1 - u.beta1) * g);
    w -= T(u.lr) * direction + T(u.decay) * w;
    m = T(u.beta2) * m + T(1 - u.beta2) * g;
  }
};

}  // namespace meshslice
