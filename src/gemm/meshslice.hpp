#pragma once
// The MeshSlice 2D GEMM (paper Fig. 5), software-pipelined: the partial collectives of slice
// s+1 are in flight while the GEMM of slice s runs, and in LS/RS the partial reduce-scatter of
// slice s drains while slice s+1 computes. Written once against an executor (RealExecutor moves
// data with MPI; the hardware model's executor times the same steps). With S = 1 there is
// nothing to overlap and the algorithm is the Collective 2D GEMM (paper Fig. 2b).
//
// Buffers are double-buffered (gemm/slice_gathers.hpp, slice_scatters.hpp): slice s uses buffer
// s % 2, so the collective filling buffer (s+1) % 2 never touches what the GEMM of slice s reads.
// C = alpha op(A) op(B) + beta C: OS folds beta into its first GEMM, LS/RS into the unslice of
// each reduced slice. A and B are GEMM operands (exec/gemm_operand.hpp): a bf16 run's may be kept
// in bf16, which the gathers slice and move as they are and the local GEMMs read as they are.
#include <array>

#include "core/errors.hpp"
#include "gemm/dataflow.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/slice_gathers.hpp"
#include "gemm/slice_scatters.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// OS: C_ij = sum_s AG_col(slice_col(A_ij, s)) * AG_row(slice_row(B_ij, s)).
template <class Exec>
void meshslice_os(Exec& ex, const GemmProblem& p, const typename Exec::Gathered& a,
                  const typename Exec::Gathered& b, const typename Exec::Mat& c,
                  const GemmOptions& o, const Scale& k) {
  const int rows = ex.mesh_rows(), cols = ex.mesh_cols(), S = o.slices;
  const std::size_t k_slice = p.K / S;
  SliceGathers<Exec> a_gathered(ex, Axis::col, a, MatrixDim::cols, p.M / rows, k_slice, o,
                                "meshslice_a_gathered");
  SliceGathers<Exec> b_gathered(ex, Axis::row, b, MatrixDim::rows, k_slice, p.N / cols, o,
                                "meshslice_b_gathered");
  for (int s = 0; s < S; ++s) {
    a_gathered.start_next(s);
    b_gathered.start_next(s);
    const auto& a_s = a_gathered.wait(s);
    const auto& b_s = b_gathered.wait(s);
    ex.gemm(k.alpha, a_s, false, b_s, false, s == 0 ? k.beta : 1, c);
  }
}

// LS: C_s = RdS_col(A_ij * AG_row(slice_row(B_ij, s))^T), written into slice_col(C_ij, s).
template <class Exec>
void meshslice_ls(Exec& ex, const GemmProblem& p, const typename Exec::Gathered& a,
                  const typename Exec::Gathered& b, const typename Exec::Mat& c,
                  const GemmOptions& o, const Scale& k) {
  const int rows = ex.mesh_rows(), S = o.slices;
  const std::size_t n_slice = p.N / S;
  SliceGathers<Exec> b_gathered(ex, Axis::row, b, MatrixDim::rows, n_slice, p.K / ex.mesh_cols(), o,
                                "meshslice_b_gathered");
  SliceScatters<Exec> c_scattered(ex, Axis::col, c, MatrixDim::cols, p.M / rows, n_slice, o,
                                  "meshslice_c_partial");
  for (int s = 0; s < S; ++s) {
    b_gathered.start_next(s);
    const auto& b_s = b_gathered.wait(s);
    ex.gemm(k.alpha, a, false, b_s, true, 0, c_scattered.partial(s));
    c_scattered.start(s, k.beta);
  }
  c_scattered.finish();
}

// RS: C_s = RdS_row(AG_col(slice_col(A_ij, s))^T * B_ij), written into slice_row(C_ij, s).
template <class Exec>
void meshslice_rs(Exec& ex, const GemmProblem& p, const typename Exec::Gathered& a,
                  const typename Exec::Gathered& b, const typename Exec::Mat& c,
                  const GemmOptions& o, const Scale& k) {
  const int rows = ex.mesh_rows(), cols = ex.mesh_cols(), S = o.slices;
  const std::size_t m_slice = p.M / S;
  SliceGathers<Exec> a_gathered(ex, Axis::col, a, MatrixDim::cols, p.K / rows, m_slice, o,
                                "meshslice_a_gathered");
  SliceScatters<Exec> c_scattered(ex, Axis::row, c, MatrixDim::rows, m_slice, p.N / cols, o,
                                  "meshslice_c_partial");
  for (int s = 0; s < S; ++s) {
    a_gathered.start_next(s);
    const auto& a_s = a_gathered.wait(s);
    ex.gemm(k.alpha, a_s, true, b, false, 0, c_scattered.partial(s));
    c_scattered.start(s, k.beta);
  }
  c_scattered.finish();
}

// Checks that the problem can be sliced and runs the dataflow's MeshSlice (called by run_gemm,
// which has checked the layout).
template <class Exec>
void meshslice_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Gathered& a,
                    const typename Exec::Gathered& b, const typename Exec::Mat& c,
                    const GemmOptions& o, const Scale& k) {
  check_sliceable(p, ex.mesh_rows(), ex.mesh_cols(), o.slices, o.block);
  switch (p.flow) {
    case Dataflow::OS: return meshslice_os(ex, p, a, b, c, o, k);
    case Dataflow::LS: return meshslice_ls(ex, p, a, b, c, o, k);
    case Dataflow::RS: return meshslice_rs(ex, p, a, b, c, o, k);
  }
}

}  // namespace meshslice
