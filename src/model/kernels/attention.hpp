#pragma once
// Causal multi-head self-attention on one chip's shard, with no communication: the standard
// layout keeps whole sequences on the chips that split tokens and whole heads on the chips that
// split hidden, and the QKV projection's columns are ordered so that a chip's block of the
// projection is [q | k | v] of the same heads (model/parameter_layout.hpp).
//
// Shapes on a chip with `seqs` whole sequences of `len` tokens and `heads` heads of `dim`:
//   qkv  (seqs*len) x (3*heads*dim), head h's q at columns [h dim, (h+1) dim) of the first third
//   a    (seqs*len) x (heads*dim)
//   p    (seqs*heads) x len x len: the softmax probabilities, kept for the backward pass (which
//        overwrites them with the score gradients)
// One thread per (sequence, head, query row); the rows are independent in both passes.
#include <cstddef>

#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

template <class T>
using Probabilities = Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>;

struct AttentionShape {
  std::size_t seqs = 0, len = 0, heads = 0, dim = 0;
  std::size_t rows() const { return seqs * heads * len; }  // (sequence, head, row) triples
};

// a = softmax(q k^T / sqrt(dim), causal) v, per sequence and head.
template <class T>
void attention_forward(const ExecSpace& space, const AttentionShape& s, const Matrix<T>& qkv,
                       const Probabilities<T>& p, const Matrix<T>& a) {
  const std::size_t len = s.len, heads = s.heads, dim = s.dim, width = heads * dim;
  const T scale = T(1) / kmath::sqrt(static_cast<T>(dim));
  Kokkos::parallel_for(
      "attention_forward", Kokkos::RangePolicy<ExecSpace>(space, 0, s.rows()),
      KOKKOS_LAMBDA(std::size_t idx) {
        const std::size_t i = idx % len, h = (idx / len) % heads, seq = idx / (len * heads);
        const std::size_t sh = seq * heads + h, ti = seq * len + i, q0 = h * dim;
        const std::size_t k0 = width + h * dim, v0 = 2 * width + h * dim;
        T top = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          T score = 0;
          for (std::size_t d = 0; d < dim; ++d) score += qkv(ti, q0 + d) * qkv(seq * len + j, k0 + d);
          score *= scale;
          p(sh, i, j) = score;
          if (j == 0 || score > top) top = score;
        }
        T sum = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          const T e = kmath::exp(p(sh, i, j) - top);
          p(sh, i, j) = e;
          sum += e;
        }
        for (std::size_t d = 0; d < dim; ++d) a(ti, h * dim + d) = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          const T pij = p(sh, i, j) / sum;
          p(sh, i, j) = pij;
          for (std::size_t d = 0; d < dim; ++d) a(ti, h * dim + d) += pij * qkv(seq * len + j, v0 + d);
        }
      });
}

// dqkv from da, given the forward's qkv, p and a. Overwrites p with the score gradients.
template <class T>
void attention_backward(const ExecSpace& space, const AttentionShape& s, const Matrix<T>& qkv,
                        const Matrix<T>& a, const Matrix<T>& da, const Probabilities<T>& p,
                        const Matrix<T>& dqkv) {
  const std::size_t len = s.len, heads = s.heads, dim = s.dim, width = heads * dim;
  const T scale = T(1) / kmath::sqrt(static_cast<T>(dim));
  // dv_j = sum_{i >= j} p_ij da_i (before p is overwritten).
  Kokkos::parallel_for(
      "attention_backward_dv", Kokkos::RangePolicy<ExecSpace>(space, 0, s.rows()),
      KOKKOS_LAMBDA(std::size_t idx) {
        const std::size_t j = idx % len, h = (idx / len) % heads, seq = idx / (len * heads);
        const std::size_t sh = seq * heads + h, tj = seq * len + j, v0 = 2 * width + h * dim;
        for (std::size_t d = 0; d < dim; ++d) dqkv(tj, v0 + d) = 0;
        for (std::size_t i = j; i < len; ++i)
          for (std::size_t d = 0; d < dim; ++d)
            dqkv(tj, v0 + d) += p(sh, i, j) * da(seq * len + i, h * dim + d);
      });
  // ds_ij = p_ij (da_i . v_j - da_i . a_i), kept in p; dq_i = scale sum_j ds_ij k_j.
  Kokkos::parallel_for(
      "attention_backward_dq", Kokkos::RangePolicy<ExecSpace>(space, 0, s.rows()),
      KOKKOS_LAMBDA(std::size_t idx) {
        const std::size_t i = idx % len, h = (idx / len) % heads, seq = idx / (len * heads);
        const std::size_t sh = seq * heads + h, ti = seq * len + i, q0 = h * dim;
        const std::size_t k0 = width + h * dim, v0 = 2 * width + h * dim;
        T row_dot = 0;
        for (std::size_t d = 0; d < dim; ++d) row_dot += da(ti, h * dim + d) * a(ti, h * dim + d);
        for (std::size_t d = 0; d < dim; ++d) dqkv(ti, q0 + d) = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          const std::size_t tj = seq * len + j;
          T dp = 0;
          for (std::size_t d = 0; d < dim; ++d) dp += da(ti, h * dim + d) * qkv(tj, v0 + d);
          const T ds = p(sh, i, j) * (dp - row_dot);
          p(sh, i, j) = ds;
          for (std::size_t d = 0; d < dim; ++d) dqkv(ti, q0 + d) += scale * ds * qkv(tj, k0 + d);
        }
      });
  // dk_j = scale sum_{i >= j} ds_ij q_i.
  Kokkos::parallel_for(
      "attention_backward_dk", Kokkos::RangePolicy<ExecSpace>(space, 0, s.rows()),
      KOKKOS_LAMBDA(std::size_t idx) {
        const std::size_t j = idx % len, h = (idx / len) % heads, seq = idx / (len * heads);
        const std::size_t sh = seq * heads + h, tj = seq * len + j, q0 = h * dim;
        const std::size_t k0 = width + h * dim;
        for (std::size_t d = 0; d < dim; ++d) dqkv(tj, k0 + d) = 0;
        for (std::size_t i = j; i < len; ++i)
          for (std::size_t d = 0; d < dim; ++d)
            dqkv(tj, k0 + d) += scale * p(sh, i, j) * qkv(seq * len + i, q0 + d);
      });
}

}  // namespace meshslice
