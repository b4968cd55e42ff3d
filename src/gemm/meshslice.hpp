#pragma once
// The MeshSlice 2D GEMM (paper Fig. 5), software-pipelined: the partial collectives of slice
// s+1 are in flight while the GEMM of slice s runs, and in LS/RS the partial reduce-scatter of
// slice s drains while slice s+1 computes. Written once against an executor (RealExecutor moves
// data with MPI; the hardware model's executor times the same steps). With S = 1 there is
// nothing to overlap and the algorithm is the Collective 2D GEMM (paper Fig. 2b).
//
// Buffers are double-buffered (gemm/slice_gathers.hpp): slice s uses buffer s % 2, so the
// collective filling buffer (s+1) % 2 never touches what the GEMM of slice s reads.
#include <array>

#include "core/errors.hpp"
#include "gemm/dataflow.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/slice_gathers.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// OS: C_ij = sum_s AG_col(slice_col(A_ij, s)) * AG_row(slice_row(B_ij, s)).
template <class Exec>
void meshslice_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                  const typename Exec::Mat& b, const typename Exec::Mat& c,
                  const GemmOptions& o) {
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
    ex.gemm(a_s, false, b_s, false, s == 0 ? 0 : 1, c);
  }
}

// LS: C_s = RdS_col(A_ij * AG_row(slice_row(B_ij, s))^T), written into slice_col(C_ij, s).
template <class Exec>
void meshslice_ls(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                  const typename Exec::Mat& b, const typename Exec::Mat& c,
                  const GemmOptions& o) {
  const int rows = ex.mesh_rows(), S = o.slices;
  const std::size_t n_slice = p.N / S;
  std::array<typename Exec::Mat, 2> partial;
  std::array<typename Exec::OpId, 2> scatter_ops{};
  SliceGathers<Exec> b_gathered(ex, Axis::row, b, MatrixDim::rows, n_slice, p.K / ex.mesh_cols(),
                                o, "meshslice_b_gathered");
  for (int i = 0; i < std::min(S, 2); ++i)
    partial[i] = ex.alloc(p.M / rows, n_slice, "meshslice_c_partial");
  for (int s = 0; s < S; ++s) {
    b_gathered.start_next(s);
    const auto& b_s = b_gathered.wait(s);
    if (s >= 2) ex.wait(scatter_ops[s % 2]);  // partial[s % 2] is free again
    ex.gemm(a, false, b_s, true, 0, partial[s % 2]);
    scatter_ops[s % 2] = ex.start_partial_reduce_scatter(Axis::col, partial[s % 2], c,
                                                         MatrixDim::cols, {S, s, o.block});
  }
  ex.wait_all();
}

// RS: C_s = RdS_row(AG_col(slice_col(A_ij, s))^T * B_ij), written into slice_row(C_ij, s).
template <class Exec>
void meshslice_rs(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                  const typename Exec::Mat& b, const typename Exec::Mat& c,
                  const GemmOptions& o) {
  const int rows = ex.mesh_rows(), cols = ex.mesh_cols(), S = o.slices;
  const std::size_t m_slice = p.M / S;
  std::array<typename Exec::Mat, 2> partial;
  std::array<typename Exec::OpId, 2> scatter_ops{};
  SliceGathers<Exec> a_gathered(ex, Axis::col, a, MatrixDim::cols, p.K / rows, m_slice, o,
                                "meshslice_a_gathered");
  for (int i = 0; i < std::min(S, 2); ++i)
    partial[i] = ex.alloc(m_slice, p.N / cols, "meshslice_c_partial");
  for (int s = 0; s < S; ++s) {
    a_gathered.start_next(s);
    const auto& a_s = a_gathered.wait(s);
    if (s >= 2) ex.wait(scatter_ops[s % 2]);
    ex.gemm(a_s, true, b, false, 0, partial[s % 2]);
    scatter_ops[s % 2] = ex.start_partial_reduce_scatter(Axis::row, partial[s % 2], c,
                                                         MatrixDim::rows, {S, s, o.block});
  }
  ex.wait_all();
}

// Checks that the problem can be sliced and runs the dataflow's MeshSlice (called by run_gemm,
// which has checked the layout).
template <class Exec>
void meshslice_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                    const typename Exec::Mat& b, const typename Exec::Mat& c,
                    const GemmOptions& o) {
  check_sliceable(p, ex.mesh_rows(), ex.mesh_cols(), o.slices, o.block);
  switch (p.flow) {
    case Dataflow::OS: return meshslice_os(ex, p, a, b, c, o);
    case Dataflow::LS: return meshslice_ls(ex, p, a, b, c, o);
    case Dataflow::RS: return meshslice_rs(ex, p, a, b, c, o);
  }
}

}  // namespace meshslice
