#pragma once
// AdamW (Loshchilov & Hutter, 2019): Adam's first and second moments with bias correction and
// weight decay decoupled from the gradient.
#include <cmath>

#include "parameters/optimizers/update_step.hpp"

namespace meshslice {

struct Adamw {
  static const OptimizerInfo& info() {
    static const OptimizerInfo i{
        "adamw",
        "Adam with decoupled weight decay (Loshchilov & Hutter)",
        {"exp_avg", "exp_avg_sq"},
        {beta1_key("the first moment's decay"),
         beta2_key("the second moment's decay"),
         {"epsilon", 1e-8, 0, kUnbounded, "added to the denominator"},
         weight_decay_key("decoupled weight decay of the weight matrices (not the norms' gains)")}};
    return i;
  }
  struct Scalars {
    double grad_scale, beta1, beta2, epsilon;
    double step_size;  // lr / (1 - beta1^t), the bias-corrected step
    double rms_scale;  // 1 / sqrt(1 - beta2^t), the second moment's correction
    double decay;      // lr * weight_decay for a weight matrix; 0 for a gain
  };
  static Scalars scalars(const OptimizerSettings& o, const UpdateStep& s) {
    const double beta1 = o.value("beta1"), beta2 = o.value("beta2");
    const double t = static_cast<double>(s.t);
    return {s.grad_scale,
            beta1,
            beta2,
            o.value("epsilon"),
            s.lr / (1.0 - std::pow(beta1, t)),
            1.0 / std::sqrt(1.0 - std::pow(beta2, t)),
            s.decayed ? s.lr * o.value("weight_decay") : 0.0};
  }
  template <class T, class State>
  KOKKOS_INLINE_FUNCTION static void update(const Scalars& u, T& w, T grad, const State& state) {
    T& m = state[0];
    T& v = state[1];
    update_adam_moments(u.beta1, u.beta2, grad * T(u.grad_scale), m, v);
    w -= T(u.step_size) * m / (kmath::sqrt(v) * T(u.rms_scale) + T(u.epsilon)) + T(u.decay) * w;
  }
};

}  // namespace meshslice
