#pragma once
// Causal multi-head self-attention on one chip's shard, with no communication: the standard
// layout keeps whole sequences on the chips that split tokens and whole heads on the chips that
// split hidden, and the QKV projection's columns are ordered so that a chip's block of the
// projection is [q | k | v] of the same heads (parameters/parameter_layout.hpp). LocalAttention runs
// it through the kernels its shape names (AttentionShape::kernel): the fused kernels
// (model/kernels/fused_attention.hpp, the default: a few launches per layer, each row's
// log-sum-exp kept) or the BLAS blocks below.
//
// Shapes on a chip with `seqs` whole sequences of `len` tokens and `heads` heads of `dim`:
//   qkv  (seqs*len) x (3*heads*dim), head h's q at columns [h dim, (h+1) dim) of the first third
//   a    (seqs*len) x (heads*dim)
//   p    the BLAS blocks' softmax probabilities, kept for the backward pass: per (sequence, head)
//        pair, the causal row blocks below (saved_elements() in all)
// The BLAS blocks: q, k and v are packed per pair (with RoPE, q and k turned by their positions
// once packed; their gradients turned back before unpacking). Query row block I (rows
// [I b, I b + b)) only sees keys [0, end_I), end_I = min(len, (I + 1) b), so each pair's q k^T,
// p v and backward products are local BLAS GEMMs on row block I against the first end_I keys,
// about half the dense work. Block I of p is stored as a contiguous rows_I x end_I matrix (zeros
// right of the diagonal), so every GEMM operand is a plain row range. A GEMM per pair, block and
// product: thousands of BLAS calls a step, which a CPU absorbs and a GPU pays in launches. The
// step's FLOP figures still use the dense count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "block/block_work.hpp"
#include "core/bfloat16.hpp"
#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "exec/gemm_operand.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/fused_attention.hpp"
#include "model/kernels/rope_table.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// The kernels, as free functions: nvcc refuses an extended (KOKKOS_LAMBDA) lambda inside a
// private or protected member function (the rule in core/kokkos_types.hpp).
namespace attention_kernels {

// Between packed[(seq, head)][i][d] and shard(seq * len + i, col0 + head * dim + d):
// unpack writes the shard, otherwise the packed buffer (from a shard of T or, packing a bf16
// run's q, k and v, of bf16).
template <class T, class S>
void move_heads(const ExecSpace& space, const AttentionShape& s, const Packed<T>& packed,
                const Matrix<S>& shard, std::size_t col0, bool unpack) {
  using Policy =
      Kokkos::MDRangePolicy<ExecSpace,
                            Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
  using Index = typename Policy::index_type;
  const std::size_t len = s.len, heads = s.heads, dim = s.dim;
  Kokkos::parallel_for(
      unpack ? "attention_unpack" : "attention_pack",
      Policy(space, {Index(0), Index(0), Index(0)},
             {static_cast<Index>(s.pairs()), static_cast<Index>(len), static_cast<Index>(dim)}),
      KOKKOS_LAMBDA(std::size_t sh, std::size_t i, std::size_t d) {
        S& shard_value = shard((sh / heads) * len + i, col0 + (sh % heads) * dim + d);
        if (unpack)
          shard_value = element_cast<S>(packed(sh, i, d));
        else
          packed(sh, i, d) = element_cast<T>(shard_value);
      });
}

// RoPE on packed q or k: in each (sequence, head) pair, row i (the token's position) has its
// dimensions d and d + dim/2 turned by the table's angle for (i, d); `inverse` turns them back
// (the backward pass's gradients).
template <class T>
void rotate_positions(const ExecSpace& space, const AttentionShape& s, const Packed<T>& table,
                      const Packed<T>& packed, bool inverse) {
  using Policy =
      Kokkos::MDRangePolicy<ExecSpace,
                            Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
  using Index = typename Policy::index_type;
  const std::size_t half = s.dim / 2;
  Kokkos::parallel_for(
      inverse ? "attention_rope_inverse" : "attention_rope",
      Policy(space, {Index(0), Index(0), Index(0)},
             {static_cast<Index>(s.pairs()), static_cast<Index>(s.len), static_cast<Index>(half)}),
      KOKKOS_LAMBDA(std::size_t sh, std::size_t i, std::size_t d) {
        const TurnedPair<T> y =
            rope_turn(table, i, d, packed(sh, i, d), packed(sh, i, d + half), inverse);
        packed(sh, i, d) = y.first;
        packed(sh, i, d + half) = y.second;
      });
}

// Calls f(sh, i, row) for every query row i of every pair, with `row` pointing at the row's
// end_i saved entries in a block buffer (p or ds) and end_i its length.
template <class T, class F>
void for_each_row(const char* name, const ExecSpace& space, const AttentionShape& s,
                  const Buffer<T>& x, const F& f) {
  const std::size_t len = s.len, b = s.block_rows(), pair = s.pair_elements();
  T* const data = x.data();
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<ExecSpace>(space, 0, s.pairs() * len),
      KOKKOS_LAMBDA(std::size_t r) {
        const std::size_t sh = r / len, i = r % len, blk = i / b;
        const std::size_t end = (blk + 1) * b < len ? (blk + 1) * b : len;
        T* row = data + sh * pair + AttentionShape::block_offset(b, blk) + (i - blk * b) * end;
        f(sh, i, row, end);
      });
}

// Row-wise causal softmax of the scores in p, in place (entries right of the diagonal, up to
// the block's end, become 0).
template <class T>
void causal_softmax(const ExecSpace& space, const AttentionShape& s, const Buffer<T>& p) {
  for_each_row(
      "attention_softmax", space, s, p,
      KOKKOS_LAMBDA(std::size_t, std::size_t i, T * row, std::size_t end) {
        // Row i's causal entries are [0, i]: their maximum, then their exponentials' sum.
        const T top = fold_in_lanes(i + 1, row[0], RowValues<T>{row}, FoldMax());
        const T sum = fold_in_lanes(i + 1, T(0), ExpInPlace<T>{row, top}, FoldSum());
        const T inv = T(1) / sum;
        for (std::size_t j = 0; j <= i; ++j) row[j] *= inv;
        for (std::size_t j = i + 1; j < end; ++j) row[j] = 0;
      });
}

// ds = p * (ds - rowsum(da * a)): the score gradient (0 right of the diagonal, where p is 0).
template <class T>
void softmax_backward(const ExecSpace& space, const AttentionShape& s, const Buffer<T>& p,
                      const Matrix<T>& a, const Matrix<T>& da, const Buffer<T>& ds) {
  const std::size_t len = s.len, heads = s.heads, dim = s.dim;
  const T* const probabilities = p.data();
  T* const scores = ds.data();
  for_each_row(
      "attention_softmax_backward", space, s, ds,
      KOKKOS_LAMBDA(std::size_t sh, std::size_t i, T * row, std::size_t end) {
        const std::size_t t = (sh / heads) * len + i, col = (sh % heads) * dim;
        T row_dot = 0;
        for (std::size_t d = 0; d < dim; ++d) row_dot += da(t, col + d) * a(t, col + d);
        const T* prob = probabilities + (row - scores);
        for (std::size_t j = 0; j < end; ++j) row[j] = prob[j] * (row[j] - row_dot);
      });
}

}  // namespace attention_kernels

// A chip's attention through the kernel its shape names (AttentionShape::kernel): the fused
// kernels, or the BLAS blocks above.
template <class T>
class LocalAttention {
 public:
  // Work buffers for one chip's shard (shared by every block: the saved state is the caller's).
  // `pair_teams` forces the fused backward pass's shape (fused_attention_geometry; -1: the
  // backend's).
  explicit LocalAttention(const AttentionShape& s, bool backward, int pair_teams = -1)
      : s_(s), fused_(fused_attention_geometry<T>(s, pair_teams)) {
    if (s.rope) {
      rope_ = Packed<T>("attention_rope_table", 2, s.len, s.dim / 2);
      attention_kernels::fill_rope_table(ExecSpace(), s, rope_);
      fence(ExecSpace(), "attention_rope_table");
    }
    if (s.kernel == AttentionKernel::fused) return;
    q_ = Packed<T>("attention_q", s.pairs(), s.len, s.dim);
    k_ = Packed<T>("attention_k", s.pairs(), s.len, s.dim);
    v_ = Packed<T>("attention_v", s.pairs(), s.len, s.dim);
    o_ = Packed<T>("attention_o", s.pairs(), s.len, s.dim);
    if (!backward) return;
    dq_ = Packed<T>("attention_dq", s.pairs(), s.len, s.dim);
    dk_ = Packed<T>("attention_dk", s.pairs(), s.len, s.dim);
    dv_ = Packed<T>("attention_dv", s.pairs(), s.len, s.dim);
    ds_ = Buffer<T>("attention_ds", s.saved_elements());
  }

  std::size_t bytes() const { return bytes_for(s_, elements(ds_) > 0); }
  // What the work buffers of a shard of shape s take (a data-free model's estimate too); the
  // fused kernels' scratch is per team and not counted.
  static std::size_t bytes_for(const AttentionShape& s, bool backward) {
    const std::size_t packed = s.pairs() * s.len * s.dim,
                      rope = s.rope ? s.len * (s.dim / 2) * 2 : 0;
    if (s.kernel == AttentionKernel::fused) return rope * sizeof(T);
    return ((backward ? 7 : 4) * packed + rope + (backward ? s.saved_elements() : 0)) * sizeof(T);
  }

  // a = softmax(q k^T / sqrt(dim), causal) v per sequence and head; `saved` (saved_elements()
  // long) keeps what the backward pass needs. qkv in T, or kept in bf16 (a bf16 run's: its
  // elements widened to T as the kernels load them).
  void forward(const ExecSpace& space, const GemmOperand<T>& qkv, const Buffer<T>& saved,
               const Matrix<T>& a) {
    if constexpr (std::is_same_v<T, float>)
      if (qkv.in_bf16()) return forward_from(space, qkv.rounded, saved, a);
    forward_from(space, qkv.value, saved, a);
  }

  // dqkv from da, given the forward's qkv (in T or kept in bf16), saved state and a.
  void backward(const ExecSpace& space, const GemmOperand<T>& qkv, const Matrix<T>& a,
                const Matrix<T>& da, const Buffer<T>& saved, const Matrix<T>& dqkv) {
    if constexpr (std::is_same_v<T, float>)
      if (qkv.in_bf16()) return backward_from(space, qkv.rounded, a, da, saved, dqkv);
    backward_from(space, qkv.value, a, da, saved, dqkv);
  }

 private:
  template <class S>
  void forward_from(const ExecSpace& space, const Matrix<S>& qkv, const Buffer<T>& saved,
                    const Matrix<T>& a) {
    if (s_.kernel == AttentionKernel::fused) {
      fused_attention_kernels::forward(space, fused_, s_.pairs(), rope_, qkv, saved, a);
      return;
    }
    const Buffer<T>& p = saved;
    pack_qkv(space, qkv);
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      for (std::size_t i = 0; i < s_.blocks(); ++i)
        blas_gemm(space, "N", "T", scale(), rows(q_, sh, i), keys(k_, sh, i), T(0),
                  block(p, sh, i));
    attention_kernels::causal_softmax(space, s_, p);
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      for (std::size_t i = 0; i < s_.blocks(); ++i)
        blas_gemm(space, "N", "N", T(1), block(p, sh, i), keys(v_, sh, i), T(0), rows(o_, sh, i));
    attention_kernels::move_heads(space, s_, o_, a, 0, /*unpack=*/true);
  }

  template <class S>
  void backward_from(const ExecSpace& space, const Matrix<S>& qkv, const Matrix<T>& a,
                     const Matrix<T>& da, const Buffer<T>& saved, const Matrix<T>& dqkv) {
    if (s_.kernel == AttentionKernel::fused) {
      fused_attention_kernels::backward(space, fused_, s_.pairs(), rope_, qkv, a, da, saved, dqkv);
      return;
    }
    const Buffer<T>& p = saved;
    pack_qkv(space, qkv);
    attention_kernels::move_heads(space, s_, o_, da, 0, /*unpack=*/false);  // o_ holds da, packed
    // Key rows [0, end_i) gather from every query block at or below them: the last block (all
    // keys) writes, the others add.
    const std::size_t last = s_.blocks() - 1;
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      for (std::size_t i = s_.blocks(); i-- > 0;) {
        blas_gemm(space, "T", "N", T(1), block(p, sh, i), rows(o_, sh, i), T(i == last ? 0 : 1),
                  keys(dv_, sh, i));
        blas_gemm(space, "N", "T", T(1), rows(o_, sh, i), keys(v_, sh, i), T(0), block(ds_, sh, i));
      }
    attention_kernels::softmax_backward(space, s_, p, a, da, ds_);  // ds_: the score gradient
    for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
      for (std::size_t i = s_.blocks(); i-- > 0;) {
        blas_gemm(space, "N", "N", scale(), block(ds_, sh, i), keys(k_, sh, i), T(0),
                  rows(dq_, sh, i));
        blas_gemm(space, "T", "N", scale(), block(ds_, sh, i), rows(q_, sh, i),
                  T(i == last ? 0 : 1), keys(dk_, sh, i));
      }
    if (s_.rope) {  // the gradients of the rotated q and k, turned back
      attention_kernels::rotate_positions(space, s_, rope_, dq_, /*inverse=*/true);
      attention_kernels::rotate_positions(space, s_, rope_, dk_, /*inverse=*/true);
    }
    const std::size_t width = s_.heads * s_.dim;
    attention_kernels::move_heads(space, s_, dq_, dqkv, 0, true);
    attention_kernels::move_heads(space, s_, dk_, dqkv, width, true);
    attention_kernels::move_heads(space, s_, dv_, dqkv, 2 * width, true);
  }

  T scale() const { return T(1) / static_cast<T>(std::sqrt(static_cast<double>(s_.dim))); }

  // Pair sh's query rows of causal block i in a packed buffer.
  Matrix<T> rows(const Packed<T>& x, std::size_t sh, std::size_t i) const {
    const std::size_t first = i * s_.block_rows();
    return Matrix<T>(x.data() + (sh * s_.len + first) * x.extent(2), s_.block_end(i) - first,
                     x.extent(2));
  }
  // Pair sh's key rows [0, end_i) in a packed buffer.
  Matrix<T> keys(const Packed<T>& x, std::size_t sh, std::size_t i) const {
    return Matrix<T>(x.data() + sh * s_.len * x.extent(2), s_.block_end(i), x.extent(2));
  }
  // Pair sh's block i of probabilities (or score gradients): rows_i x end_i.
  Matrix<T> block(const Buffer<T>& x, std::size_t sh, std::size_t i) const {
    const std::size_t first = i * s_.block_rows();
    return Matrix<T>(x.data() + sh * s_.pair_elements() +
                         AttentionShape::block_offset(s_.block_rows(), i),
                     s_.block_end(i) - first, s_.block_end(i));
  }

  // q, k and v out of the projection's output, q and k turned by their positions (RoPE).
  template <class S>
  void pack_qkv(const ExecSpace& space, const Matrix<S>& qkv) {
    const std::size_t width = s_.heads * s_.dim;
    attention_kernels::move_heads(space, s_, q_, qkv, 0, false);
    attention_kernels::move_heads(space, s_, k_, qkv, width, false);
    attention_kernels::move_heads(space, s_, v_, qkv, 2 * width, false);
    if (!s_.rope) return;
    attention_kernels::rotate_positions(space, s_, rope_, q_, /*inverse=*/false);
    attention_kernels::rotate_positions(space, s_, rope_, k_, /*inverse=*/false);
  }

  AttentionShape s_;
  FusedAttentionGeometry<T> fused_;
  Packed<T> rope_;  // with RoPE: the turns' cosines and sines, [2][len][dim/2]
  Packed<T> q_, k_, v_, o_, dq_, dk_, dv_;
  Buffer<T> ds_;
};

}  // namespace meshslice
