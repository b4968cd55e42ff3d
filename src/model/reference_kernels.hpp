#pragma once
// The serial reference's building blocks (model/reference_model.hpp, model/reference_lm.hpp):
// a linear layer's three products, RMSNorm forward and backward, the MLP's activation and the
// optimizers' updates, on whole row-major tensors in std::vector with plain loops: no Kokkos,
// MPI or BLAS.
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "model/model_config.hpp"
#include "model/model_math.hpp"
#include "parameters/optimizers/optimizer_table.hpp"

namespace meshslice::reference {

// x as a bf16 run's GEMMs read it (train.precision bf16): each element rounded to bf16 through
// float, as the float run that is checked rounds it.
template <class T>
std::vector<T> rounded_to_bf16(const std::vector<T>& x) {
  std::vector<T> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = static_cast<T>(to_float(to_bfloat16(static_cast<float>(x[i]))));
  return out;
}

// The three products of a linear layer, accumulating into c; a is n x k, b is k x m. `bf16`:
// the two operands rounded to bf16 first, the products summed in T.
// Forward: c (n x m) += a b.
template <class T>
void add_ab(const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& c, std::size_t n,
            std::size_t k, std::size_t m, bool bf16 = false) {
  if (bf16) return add_ab(rounded_to_bf16(a), rounded_to_bf16(b), c, n, k, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      const T aip = a[i * k + p];
      for (std::size_t j = 0; j < m; ++j) c[i * m + j] += aip * b[p * m + j];
    }
}

// Backward data: da (n x k) += dc (n x m) b^T.
template <class T>
void add_ab_t(const std::vector<T>& dc, const std::vector<T>& b, std::vector<T>& da, std::size_t n,
              std::size_t k, std::size_t m, bool bf16 = false) {
  if (bf16) return add_ab_t(rounded_to_bf16(dc), rounded_to_bf16(b), da, n, k, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      T sum = 0;
      for (std::size_t j = 0; j < m; ++j) sum += dc[i * m + j] * b[p * m + j];
      da[i * k + p] += sum;
    }
}

// Backward weight: db (k x m) += a^T dc.
template <class T>
void add_a_t_b(const std::vector<T>& a, const std::vector<T>& dc, std::vector<T>& db, std::size_t n,
               std::size_t k, std::size_t m, bool bf16 = false) {
  if (bf16) return add_a_t_b(rounded_to_bf16(a), rounded_to_bf16(dc), db, n, k, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      const T aip = a[i * k + p];
      for (std::size_t j = 0; j < m; ++j) db[p * m + j] += aip * dc[i * m + j];
    }
}

// h = x / sqrt(mean(x^2) + eps) * gain, row by row; inv_rms keeps each row's 1 / sqrt(...).
template <class T>
void rms_norm(const std::vector<T>& x, const std::vector<T>& gain, std::size_t tokens,
              std::size_t hidden, std::vector<T>& h, std::vector<T>& inv_rms) {
  h.assign(tokens * hidden, T(0));
  inv_rms.assign(tokens, T(0));
  for (std::size_t t = 0; t < tokens; ++t) {
    const T* row = &x[t * hidden];
    T sum = 0;
    for (std::size_t c = 0; c < hidden; ++c) sum += row[c] * row[c];
    const T r = T(1) / std::sqrt(sum / T(hidden) + T(kRmsNormEpsilon));
    inv_rms[t] = r;
    for (std::size_t c = 0; c < hidden; ++c) h[t * hidden + c] = row[c] * r * gain[c];
  }
}

// Adds the gradients of rms_norm's input and gain given dh. With r = (mean(x^2) + eps)^-1/2 and
// e = dh * gain: dx_j = r e_j - r^3 x_j (e . x) / H, since dr/dx_j = -r^3 x_j / H.
template <class T>
void rms_norm_backward(const std::vector<T>& x, const std::vector<T>& gain,
                       const std::vector<T>& inv_rms, const std::vector<T>& dh, std::size_t tokens,
                       std::size_t hidden, std::vector<T>& dx, std::vector<T>& dgain) {
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::size_t row = t * hidden;
    const T r = inv_rms[t];
    T e_dot_x = 0;
    for (std::size_t c = 0; c < hidden; ++c) {
      dgain[c] += dh[row + c] * x[row + c] * r;
      e_dot_x += dh[row + c] * gain[c] * x[row + c];
    }
    const T coupling = r * r * r * e_dot_x / T(hidden);
    for (std::size_t c = 0; c < hidden; ++c)
      dx[row + c] += r * dh[row + c] * gain[c] - coupling * x[row + c];
  }
}

// The MLP's activation (block/mlp_activations.hpp) on FF1's output u (tokens x F, or for a gated
// one tokens x 2F: [gate | up]): z (tokens x F) = act(u) or act(gate) * up.
template <class T>
void mlp_activation(MlpKind mlp, const std::vector<T>& u, std::size_t tokens, std::size_t ffn,
                    std::vector<T>& z) {
  z.resize(tokens * ffn);
  with_mlp_activation(mlp, [&](auto activation) {
    using MlpActivation = decltype(activation);
    for (std::size_t t = 0; t < tokens; ++t)
      for (std::size_t f = 0; f < ffn; ++f)
        z[t * ffn + f] = MlpActivation::gated
                             ? MlpActivation::value(u[t * 2 * ffn + f]) * u[t * 2 * ffn + ffn + f]
                             : MlpActivation::value(u[t * ffn + f]);
  });
}

// u's gradient given z's, dz.
template <class T>
std::vector<T> mlp_activation_backward(MlpKind mlp, const std::vector<T>& u,
                                       const std::vector<T>& dz, std::size_t tokens,
                                       std::size_t ffn) {
  std::vector<T> du(u.size());
  with_mlp_activation(mlp, [&](auto activation) {
    using MlpActivation = decltype(activation);
    for (std::size_t t = 0; t < tokens; ++t)
      for (std::size_t f = 0; f < ffn; ++f) {
        const T d = dz[t * ffn + f];
        if (!MlpActivation::gated) {
          du[t * ffn + f] = d * MlpActivation::derivative(u[t * ffn + f]);
          continue;
        }
        const std::size_t gate = t * 2 * ffn + f, up = gate + ffn;
        du[gate] = d * (u[up] * MlpActivation::derivative(u[gate]));
        du[up] = d * MlpActivation::value(u[gate]);
      }
  });
  return du;
}

// The sum of the squares of every element of `tensors`, in double: their part of a global norm.
template <class T>
double sum_of_squares(const std::vector<std::vector<T>>& tensors) {
  double sum = 0;
  for (const auto& tensor : tensors)
    for (T value : tensor) sum += static_cast<double>(value) * static_cast<double>(value);
  return sum;
}

// Element e of a tensor's state, as a descriptor's update takes it: state[k]. By pointer, so the
// update (a host and device function) calls nothing host-only, as nvcc requires.
template <class T>
struct VectorState {
  T* const* tensors;
  std::size_t e;
  KOKKOS_INLINE_FUNCTION T& operator[](int k) const { return tensors[k][e]; }
};

// One step of factored descriptor D (optimizers/adafactor.hpp) on the rows x cols tensor w:
// `state` is {R, C} where D factors the shape (optimizer_factors), else {V}. The sums in double.
template <class D, class T>
void factored_update(const typename D::Scalars& u, bool factors, std::size_t rows, std::size_t cols,
                     std::vector<T>& w, const std::vector<T>& g,
                     std::vector<std::vector<T>>& state) {
  const std::size_t n = w.size();
  std::vector<T> direction(n);
  if (factors) {
    std::vector<T>& r = state[0];
    std::vector<T>& c = state[1];
    const double scale = u.grad_scale * u.grad_scale;
    std::vector<double> row_squares(rows, 0.0), col_squares(cols, 0.0);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const double square = static_cast<double>(g[i * cols + j]) * g[i * cols + j];
        row_squares[i] += square;
        col_squares[j] += square;
      }
    double row_sum = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      r[i] = static_cast<T>(D::factor(u, r[i], scale * row_squares[i] / cols));
      row_sum += r[i];
    }
    for (std::size_t j = 0; j < cols; ++j)
      c[j] = static_cast<T>(D::factor(u, c[j], scale * col_squares[j] / rows));
    const T inverse_mean = static_cast<T>(D::inverse_row_mean(u, row_sum / rows));
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j)
        direction[i * cols + j] =
            D::factored_direction(u, g[i * cols + j], r[i], c[j], inverse_mean);
  } else {
    for (std::size_t e = 0; e < n; ++e)
      direction[e] = D::vector_direction(u, g[e], state[0][e], /*advance=*/true);
  }
  const auto rms = [n](const std::vector<T>& x) {
    double sum = 0;
    for (T value : x) sum += static_cast<double>(value) * static_cast<double>(value);
    return std::sqrt(sum / static_cast<double>(n));
  };
  const double weight_rms = rms(w), direction_rms = rms(direction);
  const T step = static_cast<T>(D::step_size(u, weight_rms, direction_rms));
  for (std::size_t e = 0; e < n; ++e) D::update(u, w[e], direction[e], step);
}

// One step t (from 1) of the optimizer o.kind on the rows x cols tensor w from its gradient g
// times `clip`, with weight decay when `decayed`. `state` holds the optimizer's state tensors
// (optimizer_states()); empty, it starts them at 0.
template <class T>
void update_tensor(const OptimizerSettings& o, std::size_t t, double clip, bool decayed,
                   std::size_t rows, std::size_t cols, std::vector<T>& w, const std::vector<T>& g,
                   std::vector<std::vector<T>>& state) {
  MESHSLICE_ASSERT(rows * cols == w.size(), "update_tensor: ", w.size(), " elements, not ", rows,
                   " x ", cols);
  if (state.empty())
    for (const OptimizerState& s : optimizer_states(o.kind, rows, cols))
      state.emplace_back(s.rows * s.cols);
  std::vector<T*> tensors;
  for (std::vector<T>& s : state) tensors.push_back(s.data());
  visit_optimizer(o.kind, [&](auto descriptor) {
    using D = decltype(descriptor);
    const typename D::Scalars u = step_scalars<D>(o, t, clip)[decayed ? 1 : 0];
    if constexpr (IsFactored<D>::value) {
      factored_update<D>(u, optimizer_factors(o.kind, rows, cols), rows, cols, w, g, state);
    } else {
      for (std::size_t e = 0; e < w.size(); ++e)
        D::update(u, w[e], g[e], VectorState<T>{tensors.data(), e});
    }
  });
}

}  // namespace meshslice::reference
