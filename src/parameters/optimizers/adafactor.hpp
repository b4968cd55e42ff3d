#pragma once
// Adafactor (Shazeer & Stern, 2018, "Adafactor: Adaptive Learning Rates with Sublinear Memory
// Cost"), as PyTorch's torch.optim.Adafactor computes it. A weight matrix G (rows x cols) keeps
// its second moment factored: R, the mean of G^2 over each row, and C, over each column, with
// the decay beta2_t = 1 - t^beta2_decay; the moment of element (i, j) is estimated as
// R_i C_j / max(mean(R), epsilon1). A vector (a gain) keeps the whole moment V. Then
//   U = G / sqrt(max(V, epsilon1^2)),   U' = U / max(1, RMS(U) / clip_threshold),
//   w -= lr weight_decay w + max(epsilon2, RMS(w)) min(lr, 1 / sqrt(t)) U'
// (RMS over the whole tensor; w before the step). No first moment: the state is rows + cols
// values per matrix instead of AdamW's 2 rows cols.
//
// Not element-wise: the row and column means, RMS(U) and RMS(w) are sums over the whole tensor,
// which the distributed step (parameters/factored_step.hpp) reduces over the mesh and the replicas and
// the serial reference (reference_kernels.hpp) takes directly; both call the formulas below.
#include <algorithm>
#include <cmath>

#include "parameters/optimizers/update_step.hpp"

namespace meshslice {

struct Adafactor {
  static constexpr bool factored = true;
  static const OptimizerInfo& info() {
    static const OptimizerInfo i{
        "adafactor",
        "factored second moments, steps relative to the weight's RMS (Shazeer & Stern)",
        {"variance"},
        {{"beta2_decay", -0.8, -kUnbounded, 0,
          "the second moment's decay at step t is 1 - t^beta2_decay"},
         {"epsilon1", 1e-7, 1e-15, 1,
          "the floor of the moment's row mean and, squared, of each element's estimate"},
         {"epsilon2", 1e-3, 0, kUnbounded, "the least weight RMS a step is scaled by"},
         {"clip_threshold", 1.0, 1, kUnbounded, "the update's RMS is clipped to this"},
         weight_decay_key("decoupled weight decay of the weight matrices (not the norms' gains)")},
        {"row_var", "col_var"}};
    return i;
  }
  struct Scalars {
    double grad_scale;
    double beta2;     // 1 - t^beta2_decay
    double relative;  // min(lr, 1 / sqrt(t)): the step relative to the weight's RMS
    double epsilon1, epsilon2, clip_threshold;
    double decay;  // lr * weight_decay for a weight matrix; 0 for a gain
  };
  static Scalars scalars(const OptimizerSettings& o, const UpdateStep& s) {
    const double t = static_cast<double>(s.t);
    return {s.grad_scale,
            1.0 - std::pow(t, o.value("beta2_decay")),
            std::min(s.lr, 1.0 / std::sqrt(t)),
            o.value("epsilon1"),
            o.value("epsilon2"),
            o.value("clip_threshold"),
            s.decayed ? s.lr * o.value("weight_decay") : 0.0};
  }

  // A factor's new value (R_i or C_j) from its old one and this step's mean of G^2 over its row
  // or column.
  KOKKOS_INLINE_FUNCTION static double factor(const Scalars& u, double previous,
                                              double mean_square) {
    return u.beta2 * previous + (1 - u.beta2) * mean_square;
  }
  // 1 / max(mean(R), epsilon1): what R_i C_j is scaled by.
  KOKKOS_INLINE_FUNCTION static double inverse_row_mean(const Scalars& u, double row_mean) {
    return 1.0 / (row_mean > u.epsilon1 ? row_mean : u.epsilon1);
  }
  // U of a matrix element from its factors.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T factored_direction(const Scalars& u, T grad, T row, T col,
                                                     T inverse_row_mean) {
    return normalized(u, grad * T(u.grad_scale), row * col * inverse_row_mean);
  }
  // U of a vector element; advances its moment V first when `advance` (once a step).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T vector_direction(const Scalars& u, T grad, T& variance,
                                                   bool advance) {
    const T g = grad * T(u.grad_scale);
    if (advance) variance = T(u.beta2) * variance + T(1 - u.beta2) * g * g;
    return normalized(u, g, variance);
  }
  // The step a tensor's U is multiplied by, from the RMS of its weights and of its U.
  static double step_size(const Scalars& u, double weight_rms, double direction_rms) {
    return std::max(u.epsilon2, weight_rms) * u.relative /
           std::max(1.0, direction_rms / u.clip_threshold);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void update(const Scalars& u, T& w, T direction, T step) {
    w -= T(u.decay) * w + step * direction;
  }

 private:
  template <class T>
  KOKKOS_INLINE_FUNCTION static T normalized(const Scalars& u, T g, T variance) {
    const T floor = T(u.epsilon1 * u.epsilon1);
    return g / kmath::sqrt(variance > floor ? variance : floor);
  }
};

}  // namespace meshslice
