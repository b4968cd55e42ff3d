#pragma once
// Causal multi-head self-attention on one chip's shard, with no communication: the standard
// layout keeps whole sequences on the chips that split tokens and whole heads on the chips that
// split hidden, and the QKV projection's columns are ordered so that a chip's block of the
// projection is [q | k | v] of the same heads (model/parameter_layout.hpp).
//
// Shapes on a chip with `seqs` whole sequences of `len` tokens and `heads` heads of `dim`:
//   qkv  (seqs*len) x (3*heads*dim), head h's q at columns [h dim, (h+1) dim) of the first third
//   a    (seqs*len) x (heads*dim)
//   p    (seqs*heads) x len x len: the softmax probabilities, kept for the backward pass
// Each (sequence, head) pair's q k^T, p v and their backward products are local BLAS GEMMs on
// packed copies of its q, k, v (the dense count the step's FLOP figures use); the softmax and its
// backward are row kernels.
#include <cmath>
#include <cstddef>

#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

template <class T>
using Probabilities = Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>;

struct AttentionShape {
  std::size_t seqs = 0, len = 0, heads = 0, dim = 0;
  std::size_t pairs() const { return seqs * heads; }  // (sequence, head) pairs
  // q k^T and p v, dense (the causal mask's zeros included); the backward pass does twice this.
  double forward_flops() const { return 4.0 * pairs() * len * len * dim; }
};

template <class T>
class LocalAttention {
 public:
  // Work buffers for one chip's shard (shared by every block: the saved state is p).
  explicit LocalAttention(const AttentionShape& s, bool backward)
      : s_(s),
        q_("attention_q", s.pairs(), s.len, s.dim),
        k_("attention_k", s.pairs(), s.len, s.dim),
        v_("attention_v", s.pairs(), s.len, s.dim),
        o_("attention_o", s.pairs(), s.len, s.dim) {
    if (!backward) return;
    dq_ = Probabilities<T>("attention_dq", s.pairs(), s.len, s.dim);
    dk_ = Probabilities<T>("attention_dk", s.pairs(), s.len, s.dim);
    dv_ = Probabilities<T>("attention_dv", s.pairs(), s.len, s.dim);
    dp_ = Probabilities<T>("attention_dp", s.pairs(), s.len, s.len);
  }

  std::size_t bytes() const {
    return (q_.size() + k_.size() + v_.size() + o_.size() + dq_.size() + dk_.size() + dv_.size() +
            dp_.size()) * sizeof(T);
  }

  // a = softmax(q k^T / sqrt(dim), causal) v per sequence and head; p keeps the probabilities.
  void forward(const ExecSpace& space, const Matrix<T>& qkv, const Probabilities<T>& p,
               const Matrix<T>& a) {
    pack_qkv(space, qkv);
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      blas_gemm(space, "N", "T", scale(), piece(q_, sh), piece(k_, sh), T(0), piece(p, sh));
    causal_softmax(space, p);
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      blas_gemm(space, "N", "N", T(1), piece(p, sh), piece(v_, sh), T(0), piece(o_, sh));
    move_heads(space, o_, a, 0, /*unpack=*/true);
  }

  // dqkv from da, given the forward's qkv, p and a.
  void backward(const ExecSpace& space, const Matrix<T>& qkv, const Matrix<T>& a,
                const Matrix<T>& da, const Probabilities<T>& p, const Matrix<T>& dqkv) {
    pack_qkv(space, qkv);
    move_heads(space, o_, da, 0, /*unpack=*/false);  // o_ holds da, packed
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh) {
      blas_gemm(space, "T", "N", T(1), piece(p, sh), piece(o_, sh), T(0), piece(dv_, sh));
      blas_gemm(space, "N", "T", T(1), piece(o_, sh), piece(v_, sh), T(0), piece(dp_, sh));
    }
    softmax_backward(space, p, a, da);  // dp_ becomes the score gradient
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh) {
      blas_gemm(space, "N", "N", scale(), piece(dp_, sh), piece(k_, sh), T(0), piece(dq_, sh));
      blas_gemm(space, "T", "N", scale(), piece(dp_, sh), piece(q_, sh), T(0), piece(dk_, sh));
    }
    const std::size_t width = s_.heads * s_.dim;
    move_heads(space, dq_, dqkv, 0, true);
    move_heads(space, dk_, dqkv, width, true);
    move_heads(space, dv_, dqkv, 2 * width, true);
  }

 private:
  T scale() const { return T(1) / static_cast<T>(std::sqrt(static_cast<double>(s_.dim))); }

  // The (sequence, head) pair's matrix of a packed buffer, as a plain contiguous matrix.
  static Matrix<T> piece(const Probabilities<T>& x, std::size_t sh) {
    return Matrix<T>(x.data() + sh * x.extent(1) * x.extent(2), x.extent(1), x.extent(2));
  }

  void pack_qkv(const ExecSpace& space, const Matrix<T>& qkv) {
    const std::size_t width = s_.heads * s_.dim;
    move_heads(space, q_, qkv, 0, false);
    move_heads(space, k_, qkv, width, false);
    move_heads(space, v_, qkv, 2 * width, false);
  }

  // Between packed[(seq, head)][i][d] and shard(seq * len + i, col0 + head * dim + d):
  // unpack writes the shard, otherwise the packed buffer.
  void move_heads(const ExecSpace& space, const Probabilities<T>& packed, const Matrix<T>& shard,
                  std::size_t col0, bool unpack) {
    const std::size_t len = s_.len, heads = s_.heads, dim = s_.dim;
    Kokkos::parallel_for(
        unpack ? "attention_unpack" : "attention_pack",
        Kokkos::RangePolicy<ExecSpace>(space, 0, packed.size()), KOKKOS_LAMBDA(std::size_t idx) {
          const std::size_t d = idx % dim, i = (idx / dim) % len, sh = idx / (dim * len);
          const std::size_t seq = sh / heads, h = sh % heads;
          T& shard_value = shard(seq * len + i, col0 + h * dim + d);
          if (unpack)
            shard_value = packed(sh, i, d);
          else
            packed(sh, i, d) = shard_value;
        });
  }

  // Row-wise causal softmax of the scores in p, in place (entries above the diagonal become 0).
  void causal_softmax(const ExecSpace& space, const Probabilities<T>& p) {
    const std::size_t len = s_.len;
    Kokkos::parallel_for(
        "attention_softmax", Kokkos::RangePolicy<ExecSpace>(space, 0, s_.pairs() * len),
        KOKKOS_LAMBDA(std::size_t row) {
          const std::size_t sh = row / len, i = row % len;
          T top = p(sh, i, 0);
          for (std::size_t j = 1; j <= i; ++j) top = p(sh, i, j) > top ? p(sh, i, j) : top;
          T sum = 0;
          for (std::size_t j = 0; j <= i; ++j) {
            const T e = kmath::exp(p(sh, i, j) - top);
            p(sh, i, j) = e;
            sum += e;
          }
          for (std::size_t j = 0; j <= i; ++j) p(sh, i, j) /= sum;
          for (std::size_t j = i + 1; j < len; ++j) p(sh, i, j) = 0;
        });
  }

  // dp_ = p * (dp_ - rowsum(da * a)): the score gradient (0 above the diagonal, where p is 0).
  void softmax_backward(const ExecSpace& space, const Probabilities<T>& p, const Matrix<T>& a,
                        const Matrix<T>& da) {
    const std::size_t len = s_.len, heads = s_.heads, dim = s_.dim;
    const Probabilities<T> dp = dp_;
    Kokkos::parallel_for(
        "attention_softmax_backward", Kokkos::RangePolicy<ExecSpace>(space, 0, s_.pairs() * len),
        KOKKOS_LAMBDA(std::size_t row) {
          const std::size_t sh = row / len, i = row % len, seq = sh / heads, h = sh % heads;
          const std::size_t t = seq * len + i;
          T row_dot = 0;
          for (std::size_t d = 0; d < dim; ++d) row_dot += da(t, h * dim + d) * a(t, h * dim + d);
          for (std::size_t j = 0; j < len; ++j) dp(sh, i, j) = p(sh, i, j) * (dp(sh, i, j) - row_dot);
        });
  }

  AttentionShape s_;
  Probabilities<T> q_, k_, v_, o_, dq_, dk_, dv_, dp_;
};

}  // namespace meshslice
