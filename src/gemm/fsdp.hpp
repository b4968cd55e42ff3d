#pragma once
// Fully-sharded data parallelism (PyTorch FSDP, Zhao et al.; MeshSlice paper §5 baseline) on the
// tp ring of all P = Pr * Pc chips (chip t = i * Pc + j). Every matrix is split by rows
// (algorithm.hpp's table, shard_region()): activations by batch/sequence, weights by their rows.
//   OS  C = A B:    A rows (M), B rows (K), C rows (M).
//                   The weight is all-gathered before use: C_t = A_t AG_tp(B).
//   LS  C = A B^T:  A rows (M), B rows (N), C rows (M).
//                   The weight is all-gathered before use: C_t = A_t AG_tp(B)^T.
//   RS  C = A^T B:  A rows (K), B rows (K), C rows (M): the weight gradient.
//                   A local full-size partial gradient A_t^T B_t (M x N), reduce-scattered
//                   along rows: C_t = RdS_tp(A_t^T B_t).
//
// Overlap, like FSDP's prefetching but within one GEMM: the weight's all-gather (OS, LS) or the
// gradient's reduce-scatter (RS) is sliced into S blocked sub-shards (block size B, paper Alg. 2),
// software-pipelined with double buffers as in MeshSlice. The tp ranks' row shards are
// consecutive and of equal height, so gathering sub-shard s of every rank gives exactly the
// blocked slice s of the whole dimension, and the local operand (OS, RS) or the result (LS) is
// sliced with the same spec. The sliced dimension is the one the collective runs over: K in OS,
// N in LS, M in RS; its per-chip extent (K/P, N/P, M/P) must be divisible by S*B. S = 1 is plain
// FSDP: AG before, or RdS after, not overlapped.
#include <algorithm>
#include <array>
#include <utility>

#include "core/errors.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/slice_gathers.hpp"
#include "gemm/slice_scatters.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// OS: C_t = sum_s slice_col(A_t, s) AG_tp(slice_row(B_t, s)).
template <class Exec>
void fsdp_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int S = o.slices;
  const std::size_t m_local = p.M / ex.size(Axis::tp);
  SliceGathers<Exec> b_gathered(ex, Axis::tp, b, MatrixDim::rows, p.K / S, p.N, o,
                                "fsdp_b_gathered");
  Mat a_slice;
  if (S > 1) a_slice = ex.alloc(m_local, p.K / S, "fsdp_a_slice");
  for (int s = 0; s < S; ++s) {
    b_gathered.start_next(s);
    if (S > 1) ex.slice(a, a_slice, MatrixDim::cols, {S, s, o.block});  // while the AG flies
    const Mat& b_s = b_gathered.wait(s);
    ex.gemm(k.alpha, S == 1 ? a : a_slice, false, b_s, false, s == 0 ? k.beta : 1, c);
  }
}

// LS: column slice s of C_t = A_t AG_tp(slice_row(B_t, s))^T.
template <class Exec>
void fsdp_ls(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int S = o.slices;
  const std::size_t m_local = p.M / ex.size(Axis::tp);
  SliceGathers<Exec> b_gathered(ex, Axis::tp, b, MatrixDim::rows, p.N / S, p.K, o,
                                "fsdp_b_gathered");
  // With S = 1 the GEMM writes C directly; otherwise slice s lands in `c_slice` first and is
  // scattered to its (blocked, non-contiguous) columns of C.
  Mat c_slice;
  if (S > 1) c_slice = ex.alloc(m_local, p.N / S, "fsdp_c_slice");
  for (int s = 0; s < S; ++s) {
    b_gathered.start_next(s);
    const Mat& b_s = b_gathered.wait(s);
    if (S == 1) {
      ex.gemm(k.alpha, a, false, b_s, true, k.beta, c);
    } else {
      ex.gemm(k.alpha, a, false, b_s, true, 0, c_slice);
      ex.unslice(c_slice, c, MatrixDim::cols, {S, s, o.block}, k.beta);
    }
  }
}

// RS: partial_s = slice_col(A_t, s)^T B_t (M/S x N), reduce-scattered along rows into slice s of
// C_t. The RdS of slice s drains while slice s+1 computes.
template <class Exec>
void fsdp_rs(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int S = o.slices;
  const std::size_t k_local = p.K / ex.size(Axis::tp);
  SliceScatters<Exec> c_scattered(ex, Axis::tp, c, MatrixDim::rows, p.M / S, p.N, o,
                                  "fsdp_c_partial");
  Mat a_slice;
  if (S > 1) a_slice = ex.alloc(k_local, p.M / S, "fsdp_a_slice");
  for (int s = 0; s < S; ++s) {
    if (S > 1) ex.slice(a, a_slice, MatrixDim::cols, {S, s, o.block});
    ex.gemm(k.alpha, S == 1 ? a : a_slice, true, b, false, 0, c_scattered.partial(s));
    c_scattered.start(s, k.beta);
  }
  c_scattered.finish();
}

// Checks the row split and slicing, and runs the dataflow's FSDP GEMM.
template <class Exec>
void fsdp_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
               const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
               const Scale& k) {
  // run_gemm checked the row splits (check_layout); the sliced dimension is the one the weight
  // all-gather / gradient reduce-scatter runs over: K in OS, N in LS, M in RS.
  check_slice_split("FSDP", p, sliced_dimension(p), ex.size(Axis::tp), o.slices, o.block);
  switch (p.flow) {
    case Dataflow::OS: return fsdp_os(ex, p, a, b, c, o, k);
    case Dataflow::LS: return fsdp_ls(ex, p, a, b, c, o, k);
    case Dataflow::RS: return fsdp_rs(ex, p, a, b, c, o, k);
  }
}

}  // namespace meshslice
