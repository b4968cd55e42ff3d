#pragma once
// NAdamW: Adam with Nesterov momentum (Dozat, 2016, "Incorporating Nesterov Momentum into Adam")
// and decoupled weight decay, as torch.optim.NAdam(decoupled_weight_decay=True) takes its step;
// the AlgoPerf benchmark's strongest baseline. Adam's two moments; the step mixes this step's
// gradient and the momentum by the momentum schedule mu_t = beta1 (1 - 0.96^(t psi) / 2):
//   w -= lr [(1 - mu_t) / (1 - prod_{i<=t} mu_i) g + mu_{t+1} / (1 - prod_{i<=t+1} mu_i) m]
//        / (sqrt(v / (1 - beta2^t)) + epsilon) + lr weight_decay w.
#include <cmath>
#include <cstddef>

#include "parameters/optimizers/update_step.hpp"

namespace meshslice {

struct Nadamw {
  static const OptimizerInfo& info() {
    static const OptimizerInfo i{
        "nadamw",
        "Adam with Nesterov momentum and decoupled weight decay (Dozat; PyTorch's NAdam)",
        {"exp_avg", "exp_avg_sq"},
        {beta1_key("the first moment's decay"),
         beta2_key("the second moment's decay"),
         {"epsilon", 1e-8, 0, kUnbounded, "added to the denominator"},
         {"momentum_decay", 4e-3, 0, kUnbounded,
          "psi of the momentum schedule beta1 (1 - 0.96^(t psi) / 2) (PyTorch's default)"},
         weight_decay_key("decoupled weight decay of the weight matrices (not the norms' gains)")}};
    return i;
  }
  struct Scalars {
    double grad_scale, beta1, beta2, epsilon;
    double gradient_step;  // lr (1 - mu_t) / (1 - prod_{i<=t} mu_i)
    double momentum_step;  // lr mu_{t+1} / (1 - prod_{i<=t+1} mu_i)
    double rms_scale;      // 1 / sqrt(1 - beta2^t), the second moment's correction
    double decay;          // lr * weight_decay for a weight matrix; 0 for a gain
  };
  static Scalars scalars(const OptimizerSettings& o, const UpdateStep& s) {
    const double beta1 = o.value("beta1"), beta2 = o.value("beta2");
    const double psi = o.value("momentum_decay");
    const auto mu = [&](std::size_t t) {
      return beta1 * (1.0 - 0.5 * std::pow(0.96, static_cast<double>(t) * psi));
    };
    // The product in PyTorch's order, in double (PyTorch keeps it, and the step, as float32
    // scalars unless its default dtype is float64: 1e-10 apart after a step of lr 0.01). Below
    // 2^-54 it no longer matters (1 - product, and 1 - product mu, round to 1), so the loop
    // stops there: after 48 steps for beta1 0.9 and 54 for 0.99 (the early mu are near beta1 / 2).
    double product = 1;
    for (std::size_t i = 1; i <= s.t && product >= 0x1p-54; ++i) product *= mu(i);
    const double next = mu(s.t + 1);
    return {s.grad_scale,
            beta1,
            beta2,
            o.value("epsilon"),
            s.lr * (1.0 - mu(s.t)) / (1.0 - product),
            s.lr * next / (1.0 - product * next),
            1.0 / std::sqrt(1.0 - std::pow(beta2, static_cast<double>(s.t))),
            s.decayed ? s.lr * o.value("weight_decay") : 0.0};
  }
  template <class T, class State>
  KOKKOS_INLINE_FUNCTION static void update(const Scalars& u, T& w, T grad, const State& state) {
    T& m = state[0];
    T& v = state[1];
    const T g = grad * T(u.grad_scale);
    update_adam_moments(u.beta1, u.beta2, g, m, v);
    const T denominator = kmath::sqrt(v) * T(u.rms_scale) + T(u.epsilon);
    w -= (T(u.gradient_step) * g + T(u.momentum_step) * m) / denominator + T(u.decay) * w;
  }
};

}  // namespace meshslice
