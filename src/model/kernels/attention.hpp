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
// right of the diagonal), so every GEMM operand is a plain row range, and block I of every pair
// lies the same distance from the pair's before: each block and product is one strided batch
// over the pairs on a GPU (exec/batched_gemm.hpp: one cuBLAS call), while a CPU takes each
// pair's blocks in turn (LocalAttention::for_blocks). The softmax kernels give a row to a thread
// on a CPU and to a team on a GPU (model/kernels/rows.hpp). The step's FLOP figures still use the
// dense count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "block/block_work.hpp"
#include "core/bfloat16.hpp"
#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "exec/batched_gemm.hpp"
#include "exec/gemm_operand.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/fused_attention.hpp"
#include "model/kernels/rope_table.hpp"
#include "model/kernels/rows.hpp"
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

// Calls f(member, sh, i, row, end) for every query row i of every pair (as a row of
// model/kernels/rows.hpp: a thread's on a CPU, a team's on a GPU), with `row` pointing at the
// row's end saved entries in a block buffer (p or ds).
template <class T, class F>
void for_each_saved_row(const char* name, const ExecSpace& space, const AttentionShape& s,
                        const Buffer<T>& x, const F& f) {
  const std::size_t len = s.len, b = s.block_rows(), pair = s.pair_elements();
  T* const data = x.data();
  for_each_row(
      name, space, s.pairs() * len, KOKKOS_LAMBDA(const RowMember& member) {
        const std::size_t r = member.league_rank();
        const std::size_t sh = r / len, i = r % len, blk = i / b;
        const std::size_t end = (blk + 1) * b < len ? (blk + 1) * b : len;
        T* row = data + sh * pair + AttentionShape::block_offset(b, blk) + (i - blk * b) * end;
        f(member, sh, i, row, end);
      });
}

// Row-wise causal softmax of the scores in p, in place (entries right of the diagonal, up to
// the block's end, become 0).
template <class T>
void causal_softmax(const ExecSpace& space, const AttentionShape& s, const Buffer<T>& p) {
  for_each_saved_row(
      "attention_softmax", space, s, p,
      KOKKOS_LAMBDA(const RowMember& member, std::size_t, std::size_t i, T* row, std::size_t end) {
        // Row i's causal entries are [0, i]: their maximum, then their exponentials' sum.
        const T top = row_fold(member, i + 1, row[0], RowValues<T>{row}, FoldMax());
        const T sum = row_fold(member, i + 1, T(0), ExpInPlace<T>{row, top}, FoldSum());
        const T inv = T(1) / sum;
        row_barrier(member);  // the exponentials other threads of the team wrote
        row_for(member, i + 1, [&](std::size_t j) { row[j] *= inv; });
        row_for(member, end - i - 1, [&](std::size_t j) { row[i + 1 + j] = 0; });
      });
}

// The terms of a dot product x . y (a row of da against the same row of a).
template <class T>
struct RowProducts {
  const T* x;
  const T* y;
  KOKKOS_INLINE_FUNCTION T operator()(std::size_t i) const { return x[i] * y[i]; }
};

// ds = p * (ds - rowsum(da * a)): the score gradient (0 right of the diagonal, where p is 0).
template <class T>
void softmax_backward(const ExecSpace& space, const AttentionShape& s, const Buffer<T>& p,
                      const Matrix<T>& a, const Matrix<T>& da, const Buffer<T>& ds) {
  const std::size_t len = s.len, heads = s.heads, dim = s.dim;
  const T* const probabilities = p.data();
  T* const scores = ds.data();
  for_each_saved_row(
      "attention_softmax_backward", space, s, ds,
      KOKKOS_LAMBDA(const RowMember& member, std::size_t sh, std::size_t i, T* row,
                    std::size_t end) {
        const std::size_t t = (sh / heads) * len + i, col = (sh % heads) * dim;
        const T row_dot =
            row_fold(member, dim, T(0), RowProducts<T>{&da(t, col), &a(t, col)}, FoldSum());
        const T* prob = probabilities + (row - scores);
        row_for(member, end, [&](std::size_t j) { row[j] = prob[j] * (row[j] - row_dot); });
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
    for_blocks(false, [&](std::size_t sh, std::size_t i, std::size_t pairs) {
      batched_gemm(space, false, true, scale(), rows(q_, sh, i), keys(k_, sh, i), T(0),
                   block(p, sh, i), pairs);
    });
    attention_kernels::causal_softmax(space, s_, p);
    for_blocks(false, [&](std::size_t sh, std::size_t i, std::size_t pairs) {
      batched_gemm(space, false, false, T(1), block(p, sh, i), keys(v_, sh, i), T(0),
                   rows(o_, sh, i), pairs);
    });
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
    for_blocks(true, [&](std::size_t sh, std::size_t i, std::size_t pairs) {
      batched_gemm(space, true, false, T(1), block(p, sh, i), rows(o_, sh, i), T(i == last ? 0 : 1),
                   keys(dv_, sh, i), pairs);
      batched_gemm(space, false, true, T(1), rows(o_, sh, i), keys(v_, sh, i), T(0),
                   block(ds_, sh, i), pairs);
    });
    attention_kernels::softmax_backward(space, s_, p, a, da, ds_);  // ds_: the score gradient
    for_blocks(true, [&](std::size_t sh, std::size_t i, std::size_t pairs) {
      batched_gemm(space, false, false, scale(), block(ds_, sh, i), keys(k_, sh, i), T(0),
                   rows(dq_, sh, i), pairs);
      batched_gemm(space, true, false, scale(), block(ds_, sh, i), rows(q_, sh, i),
                   T(i == last ? 0 : 1), keys(dk_, sh, i), pairs);
    });
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

  // product(sh, i, n): causal block i's GEMMs for the n pairs from pair sh, for every block
  // (last first when `descending`) and pair. On a GPU each block once for all pairs (a strided
  // batch: one cuBLAS call); on a CPU each pair's blocks in turn, so that the pair's q, k and v
  // stay in the core's cache between them (block by block across the pairs, bench-h1024's
  // GEMMs ran 1-5 % slower).
  template <class Product>
  void for_blocks(bool descending, const Product& product) const {
    const std::size_t blocks = s_.blocks();
    auto block_at = [&](std::size_t n) { return descending ? blocks - 1 - n : n; };
    if constexpr (kRunsOnHost) {
      for (std::size_t sh = 0; sh < s_.pairs(); ++sh)
        for (std::size_t n = 0; n < blocks; ++n) product(sh, block_at(n), std::size_t(1));
    } else {
      for (std::size_t n = 0; n < blocks; ++n) product(std::size_t(0), block_at(n), s_.pairs());
    }
  }

  // Pair sh's (and the following pairs') query rows of causal block i in a packed buffer.
  StridedBatch<T> rows(const Packed<T>& x, std::size_t sh, std::size_t i) const {
    const std::size_t first = i * s_.block_rows();
    return {Matrix<T>(x.data() + (sh * s_.len + first) * x.extent(2), s_.block_end(i) - first,
                      x.extent(2)),
            s_.len * x.extent(2)};
  }
  // Pair sh's (and the following pairs') key rows [0, end_i) in a packed buffer.
  StridedBatch<T> keys(const Packed<T>& x, std::size_t sh, std::size_t i) const {
    return {Matrix<T>(x.data() + sh * s_.len * x.extent(2), s_.block_end(i), x.extent(2)),
            s_.len * x.extent(2)};
  }
  // Pair sh's (and the following pairs') block i of probabilities (or score gradients):
  // rows_i x end_i.
  StridedBatch<T> block(const Buffer<T>& x, std::size_t sh, std::size_t i) const {
    const std::size_t first = i * s_.block_rows();
    return {Matrix<T>(x.data() + sh * s_.pair_elements() +
                          AttentionShape::block_offset(s_.block_rows(), i),
                      s_.block_end(i) - first, s_.block_end(i)),
            s_.pair_elements()};
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
