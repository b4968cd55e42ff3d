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

#include "core/errors.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/sliced_1d.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// OS: C_t = sum_s slice_col(A_t, s) AG_tp(slice_row(B_t, s)).
template <class Exec>
void fsdp_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  using Gathered = typename Exec::Gathered;  // a GEMM operand
  const std::size_t k_slice = p.K / o.slices;
  SliceGathers<Exec> b_gathered(ex, Axis::tp, b, MatrixDim::rows, k_slice, p.N, o,
                                "fsdp_b_gathered");
  sliced_1d::gathered_into_c_sum(ex, b_gathered, a, MatrixDim::cols, p.M / ex.size(Axis::tp),
                                 k_slice, o, k.beta, "fsdp_a_slice",
                                 [&](const Gathered& b_s, const Mat& a_s, double beta) {
                                   ex.gemm(k.alpha, a_s, false, b_s, false, beta, c);
                                 });
}

// LS: column slice s of C_t = A_t AG_tp(slice_row(B_t, s))^T.
template <class Exec>
void fsdp_ls(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  using Gathered = typename Exec::Gathered;  // a GEMM operand
  const std::size_t n_slice = p.N / o.slices;
  SliceGathers<Exec> b_gathered(ex, Axis::tp, b, MatrixDim::rows, n_slice, p.K, o,
                                "fsdp_b_gathered");
  sliced_1d::gathered_into_c_slices(ex, b_gathered, c, MatrixDim::cols, p.M / ex.size(Axis::tp),
                                    n_slice, o, k.beta, "fsdp_c_slice",
                                    [&](const Gathered& b_s, double beta, const Mat& out) {
                                      ex.gemm(k.alpha, a, false, b_s, true, beta, out);
                                    });
}

// RS: partial_s = slice_col(A_t, s)^T B_t (M/S x N), reduce-scattered along rows into slice s of
// C_t. The RdS of slice s drains while slice s+1 computes.
template <class Exec>
void fsdp_rs(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const std::size_t m_slice = p.M / o.slices;
  SliceScatters<Exec> c_scattered(ex, Axis::tp, c, MatrixDim::rows, m_slice, p.N, o,
                                  "fsdp_c_partial");
  sliced_1d::local_into_c_scatters(ex, c_scattered, a, MatrixDim::cols, p.K / ex.size(Axis::tp),
                                   m_slice, o, k.beta, "fsdp_a_slice",
                                   [&](const Mat& a_s, const Mat& partial) {
                                     ex.gemm(k.alpha, a_s, true, b, false, 0, partial);
                                   });
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
