#pragma once
// 1D tensor parallelism in the Megatron sequence-parallel style (Korthikanti et al.; MeshSlice
// paper §5 baseline), on the tp ring of all P = Pr * Pc chips (chip t = i * Pc + j). Shards, as
// algorithm.hpp's table and shard_region() fix them:
//   OS  C = A B:    A rows (sequence-sharded activations), B cols, C cols.
//                   AG_tp(A rows) before the GEMM, then C_t = A B_t.
//   LS  C = A B^T:  A cols, B cols, C rows.
//                   Local partial product A_t B_t^T (full M x N), then RdS_tp along rows: C_t.
//   RS  C = A^T B:  A rows, B cols, C cols.
//                   AG_tp(A rows) before the GEMM, then C_t = A^T B_t.
//
// Overlap is MeshSlice's slicing applied to the one ring: the gathered (OS, RS) or scattered (LS)
// dimension is cut into S blocked sub-shards (block size B, paper Alg. 2) and the partial
// collective of sub-shard s+1 (OS, RS), or s-1 (LS), is in flight while the GEMM of sub-shard s
// runs, with double buffers. Because the tp ranks' shards are consecutive row blocks of equal
// height, gathering sub-shard s of every rank yields exactly the blocked slice s of the whole
// dimension, so the other operand (RS) or the result (OS) is sliced with the same spec.
// The sliced dimension is M in OS and LS (the sequence, as in Megatron's chunked AG/RdS) and K in
// RS; its per-chip extent (M/P, M/P, K/P) must be divisible by S*B. S = 1 is the plain,
// non-overlapped AG-before / RdS-after scheme.

#include "core/errors.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/sliced_1d.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// OS: for each slice s, Ag_s = AG_tp(slice_row(A_t, s)) (M/S x K); C rows of slice s = Ag_s B_t.
template <class Exec>
void tp1d_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  using Gathered = typename Exec::Gathered;  // a GEMM operand
  const std::size_t m_slice = p.M / o.slices;
  SliceGathers<Exec> a_gathered(ex, Axis::tp, a, MatrixDim::rows, m_slice, p.K, o,
                                "tp1d_a_gathered");
  sliced_1d::gathered_into_c_slices(ex, a_gathered, c, MatrixDim::rows, m_slice,
                                    p.N / ex.size(Axis::tp), o, k.beta, "tp1d_c_slice",
                                    [&](const Gathered& a_s, double beta, const Mat& out) {
                                      ex.gemm(k.alpha, a_s, false, b, false, beta, out);
                                    });
}

// LS: for each slice s, partial_s = slice_row(A_t, s) B_t^T (M/S x N), reduce-scattered along
// rows into slice s of C_t. The RdS of slice s drains while slice s+1 computes.
template <class Exec>
void tp1d_ls(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const std::size_t m_slice = p.M / o.slices;
  SliceScatters<Exec> c_scattered(ex, Axis::tp, c, MatrixDim::rows, m_slice, p.N, o,
                                  "tp1d_c_partial");
  sliced_1d::local_into_c_scatters(ex, c_scattered, a, MatrixDim::rows, m_slice,
                                   p.K / ex.size(Axis::tp), o, k.beta, "tp1d_a_slice",
                                   [&](const Mat& a_s, const Mat& partial) {
                                     ex.gemm(k.alpha, a_s, false, b, true, 0, partial);
                                   });
}

// RS: for each slice s, Ag_s = AG_tp(slice_row(A_t, s)) (K/S x M); C_t += Ag_s^T slice_row(B_t, s).
template <class Exec>
void tp1d_rs(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  using Gathered = typename Exec::Gathered;  // a GEMM operand
  const std::size_t k_slice = p.K / o.slices;
  SliceGathers<Exec> a_gathered(ex, Axis::tp, a, MatrixDim::rows, k_slice, p.M, o,
                                "tp1d_a_gathered");
  sliced_1d::gathered_into_c_sum(ex, a_gathered, b, MatrixDim::rows, k_slice,
                                 p.N / ex.size(Axis::tp), o, k.beta, "tp1d_b_slice",
                                 [&](const Gathered& a_s, const Mat& b_s, double beta) {
                                   ex.gemm(k.alpha, a_s, true, b_s, false, beta, c);
                                 });
}

// Checks the 1D split and slicing, and runs the dataflow's 1D TP GEMM.
template <class Exec>
void tp1d_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
               const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
               const Scale& k) {
  // run_gemm checked the splits (check_layout); the gathered/scattered dimension is sliced:
  // M in OS and LS (the sequence, as Megatron chunks it), K in RS.
  const SlicedDimension sliced =
      p.flow == Dataflow::RS ? SlicedDimension{"K", p.K} : SlicedDimension{"M", p.M};
  check_slice_split("1D TP", p, sliced, ex.size(Axis::tp), o.slices, o.block);
  switch (p.flow) {
    case Dataflow::OS: return tp1d_os(ex, p, a, b, c, o, k);
    case Dataflow::LS: return tp1d_ls(ex, p, a, b, c, o, k);
    case Dataflow::RS: return tp1d_rs(ex, p, a, b, c, o, k);
  }
}

}  // namespace meshslice
