#pragma once
// SUMMA (van de Geijn & Watts; MeshSlice paper Fig. 2a) in the three dataflows, unrolled to S
// iterations as the paper's evaluation does (§4.2) and software-pipelined.
//
// The dimension SUMMA steps through (K for OS, N for LS, M for RS) is cut into P panels of equal
// width. P is a common multiple of Pr and Pc (paper §2.3.3), so every panel lies inside one
// chip's shard on either mesh axis: on a ring of R chips, ring rank r owns panels
// r*P/R .. (r+1)*P/R - 1. Per panel p:
//   OS: A' = bcast_col(A_ip), B' = bcast_row(B_pj), C_ij += A' B'
//   LS: B' = bcast_row(B_pj), C' = A_ij B'^T, reduce_col(C', C_ip)
//   RS: A' = bcast_col(A_ip), C' = A'^T B_ij, reduce_row(C', C_pj)
//
// What S means: the paper unrolls SUMMA's P-step loop into S iterations (it sets SUMMA's
// iteration count to MeshSlice's slice count) to merge the small per-panel GEMMs into larger
// ones. Iteration s handles the G = P/S consecutive panels s*G .. s*G+G-1: it still broadcasts
// (and reduces) every panel separately -- one root per panel, P bcasts/reduces per operand in
// all, which is SUMMA's communication pattern and its synchronization cost -- but runs one GEMM
// over the G panels, concatenated. P = lcm(Pr, Pc) when S divides it; otherwise P is the
// smallest common multiple of Pr and Pc that S divides, lcm(Pr, Pc, S) (the paper allows any
// common multiple), so S > lcm(Pr, Pc) refines the panels instead of unrolling them. The
// stepped dimension must split into P panels; that is the one extra condition on S. The block
// size B of MeshSlice's slicing does not apply: SUMMA's panels are contiguous.
//
// Pipelining: the broadcasts of iteration s+1 are in flight while iteration s computes, and in
// LS/RS the reduces of iteration s drain while iteration s+1 computes. Every buffer is doubled:
// iteration s uses set s % 2.
#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <vector>

#include "comm/slicing.hpp"
#include "core/errors.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

namespace summa_detail {

// How SUMMA cuts the stepped dimension: P panels of `width`, S iterations of G panels each.
struct Panels {
  int count = 1;          // P
  int group = 1;          // G = P / S
  std::size_t width = 0;  // extent / P
};

// The panel plan for this problem, or a UserError naming the sizes when S does not fit.
inline Panels plan_panels(const GemmProblem& p, int mesh_rows, int mesh_cols, int slices,
                          int block) {
  require(slices >= 1 && block >= 1, "SUMMA: slice count S=", slices, " and block size B=", block,
          " must both be >= 1");
  const char* name = p.flow == Dataflow::OS ? "K" : p.flow == Dataflow::LS ? "N" : "M";
  const std::size_t extent = p.flow == Dataflow::OS ? p.K : p.flow == Dataflow::LS ? p.N : p.M;
  const int mesh_lcm = std::lcm(mesh_rows, mesh_cols);
  const int count = std::lcm(mesh_lcm, slices);
  require(extent % static_cast<std::size_t>(count) == 0, "SUMMA ", dataflow_name(p.flow),
          " steps through ", name, "=", extent,
          " in P panels, P a common multiple of Pr=", mesh_rows, " and Pc=", mesh_cols,
          " that S=", slices, " divides: P = lcm(", mesh_rows, ", ", mesh_cols, ", ", slices,
          ") = ", count, " does not divide ", name, "=", extent, ". Choose S with lcm(", mesh_rows,
          ", ", mesh_cols, ", S) dividing ", extent, " (S dividing lcm(Pr, Pc) = ", mesh_lcm,
          " always works)");
  return {count, count / slices, extent / count};
}

// One operand that SUMMA broadcasts panel by panel along `axis`: its panels are contiguous runs
// of `dim` (columns of A, rows of B), and ring rank r owns P/R of them in its shard.
template <class Exec>
class PanelBroadcast {
 public:
  using Mat = typename Exec::Mat;
  using OpId = typename Exec::OpId;

  PanelBroadcast(Exec& ex, const Mat& shard, Axis axis, MatrixDim dim, const Panels& panels,
                 int iterations)
      : ex_(ex),
        shard_(shard),
        axis_(axis),
        dim_(dim),
        panels_(panels),
        per_owner_(panels.count / ex.size(axis)) {
    const bool cols = dim == MatrixDim::cols;
    const std::size_t keep = shard.extent(cols ? 0 : 1);
    const std::size_t g = static_cast<std::size_t>(panels.group);
    for (int set = 0; set < std::min(iterations, 2); ++set) {
      for (int t = 0; t < panels.group; ++t)
        panel_[set].push_back(cols ? ex.alloc(keep, panels.width, "summa_panel")
                                   : ex.alloc(panels.width, keep, "summa_panel"));
      // With one panel per iteration the panel buffer is the operand: nothing to concatenate.
      group_[set] = panels.group == 1 ? panel_[set][0]
                    : cols            ? ex.alloc(keep, g * panels.width, "summa_group")
                                      : ex.alloc(g * panels.width, keep, "summa_group");
    }
  }

  // Starts the broadcasts of iteration s's panels. Broadcasting is in place, so the owner first
  // packs its panel into the buffer the others receive into.
  void start(int s) {
    const int set = s % 2;
    ops_[set].clear();
    for (int t = 0; t < panels_.group; ++t) {
      const int k = s * panels_.group + t;
      const int owner = k / per_owner_;
      if (ex_.coord(axis_) == owner) ex_.slice(shard_, panel_[set][t], dim_, panel_in_shard(k));
      ops_[set].push_back(ex_.start_broadcast(axis_, panel_[set][t], owner));
    }
  }

  // Waits for iteration s's panels and returns them side by side (along `dim`) as one operand.
  const Mat& finish(int s) {
    const int set = s % 2;
    for (OpId op : ops_[set]) ex_.wait(op);
    if (panels_.group > 1)
      for (int t = 0; t < panels_.group; ++t)
        ex_.unslice(panel_[set][t], group_[set], dim_,
                    {panels_.group, t, static_cast<int>(panels_.width)});
    return group_[set];
  }

 private:
  // Panel k is the (k mod P/R)-th of the P/R contiguous panels of its owner's shard.
  SliceSpec panel_in_shard(int k) const {
    return {per_owner_, k % per_owner_, static_cast<int>(panels_.width)};
  }

  Exec& ex_;
  const Mat& shard_;
  Axis axis_;
  MatrixDim dim_;
  Panels panels_;
  int per_owner_;
  std::array<std::vector<Mat>, 2> panel_;
  std::array<Mat, 2> group_;
  std::array<std::vector<OpId>, 2> ops_;
};

// C's panels, which SUMMA LS/RS compute as partial sums on every chip of a ring and reduce,
// panel by panel, to the ring rank whose shard holds the panel (P/R contiguous runs of `dim`).
template <class Exec>
class PanelReduce {
 public:
  using Mat = typename Exec::Mat;
  using OpId = typename Exec::OpId;

  PanelReduce(Exec& ex, const Mat& shard, Axis axis, MatrixDim dim, const Panels& panels,
              int iterations)
      : ex_(ex),
        shard_(shard),
        axis_(axis),
        dim_(dim),
        panels_(panels),
        per_owner_(panels.count / ex.size(axis)) {
    const bool cols = dim == MatrixDim::cols;
    const std::size_t keep = shard.extent(cols ? 0 : 1);
    const std::size_t g = static_cast<std::size_t>(panels.group);
    auto panel_buffer = [&](const char* label) {
      return cols ? ex.alloc(keep, panels.width, label) : ex.alloc(panels.width, keep, label);
    };
    for (int set = 0; set < std::min(iterations, 2); ++set) {
      for (int t = 0; t < panels.group; ++t) {
        contribution_[set].push_back(panel_buffer("summa_partial_panel"));
        result_[set].push_back(panel_buffer("summa_reduced_panel"));
      }
      // With one panel per iteration the GEMM writes the reduce's input directly.
      partial_[set] = panels.group == 1 ? contribution_[set][0]
                      : cols            ? ex.alloc(keep, g * panels.width, "summa_partial")
                                        : ex.alloc(g * panels.width, keep, "summa_partial");
    }
  }

  // Where iteration s's GEMM writes its partial C (G panels side by side along `dim`).
  const Mat& partial(int s) const { return partial_[s % 2]; }

  // Starts reducing iteration s's panels to their owners. The partial is cut into contiguous
  // per-panel buffers first (each reduce has its own root), which also frees partial(s) at once.
  void start(int s) {
    const int set = s % 2;
    ops_[set].clear();
    for (int t = 0; t < panels_.group; ++t) {
      if (panels_.group > 1)
        ex_.slice(partial_[set], contribution_[set][t], dim_,
                  {panels_.group, t, static_cast<int>(panels_.width)});
      const int k = s * panels_.group + t;
      ops_[set].push_back(
          ex_.start_reduce(axis_, contribution_[set][t], result_[set][t], k / per_owner_));
    }
  }

  // Waits for iteration s's reduces; the owner of each panel stores the sum into its C shard
  // (panel = sum + beta * panel).
  void finish(int s, double beta) {
    const int set = s % 2;
    for (OpId op : ops_[set]) ex_.wait(op);
    for (int t = 0; t < panels_.group; ++t) {
      const int k = s * panels_.group + t;
      if (ex_.coord(axis_) == k / per_owner_)
        ex_.unslice(result_[set][t], shard_, dim_,
                    {per_owner_, k % per_owner_, static_cast<int>(panels_.width)}, beta);
    }
  }

 private:
  Exec& ex_;
  const Mat& shard_;
  Axis axis_;
  MatrixDim dim_;
  Panels panels_;
  int per_owner_;
  std::array<std::vector<Mat>, 2> contribution_, result_;
  std::array<Mat, 2> partial_;
  std::array<std::vector<OpId>, 2> ops_;
};

}  // namespace summa_detail

// OS: C_ij = sum_p bcast_col(A_ip) bcast_row(B_pj); A's column panels travel along each mesh
// row, B's row panels along each mesh column, C stays.
template <class Exec>
void summa_os(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
              const typename Exec::Mat& c, const summa_detail::Panels& panels, const Scale& k) {
  const int S = panels.count / panels.group;
  summa_detail::PanelBroadcast<Exec> a_panels(ex, a, Axis::col, MatrixDim::cols, panels, S);
  summa_detail::PanelBroadcast<Exec> b_panels(ex, b, Axis::row, MatrixDim::rows, panels, S);
  a_panels.start(0);
  b_panels.start(0);
  for (int s = 0; s < S; ++s) {
    if (s + 1 < S) {
      a_panels.start(s + 1);
      b_panels.start(s + 1);
    }
    const auto& a_group = a_panels.finish(s);
    const auto& b_group = b_panels.finish(s);
    ex.gemm(k.alpha, a_group, false, b_group, false, s == 0 ? k.beta : 1, c);
  }
}

// LS: B's row panels (N) travel down each mesh column; every chip of a mesh row computes a
// partial of C's column panel p, reduced along the row to the chip holding that panel.
template <class Exec>
void summa_ls(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
              const typename Exec::Mat& c, const summa_detail::Panels& panels, const Scale& k) {
  const int S = panels.count / panels.group;
  summa_detail::PanelBroadcast<Exec> b_panels(ex, b, Axis::row, MatrixDim::rows, panels, S);
  summa_detail::PanelReduce<Exec> c_panels(ex, c, Axis::col, MatrixDim::cols, panels, S);
  b_panels.start(0);
  for (int s = 0; s < S; ++s) {
    if (s + 1 < S) b_panels.start(s + 1);
    const auto& b_group = b_panels.finish(s);
    if (s >= 2) c_panels.finish(s - 2, k.beta);  // the buffers of set s % 2 are free again
    ex.gemm(k.alpha, a, false, b_group, true, 0, c_panels.partial(s));
    c_panels.start(s);
  }
  for (int s = std::max(0, S - 2); s < S; ++s) c_panels.finish(s, k.beta);
}

// RS: A's column panels (M) travel along each mesh row; every chip of a mesh column computes a
// partial of C's row panel p, reduced along the column to the chip holding that panel.
template <class Exec>
void summa_rs(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
              const typename Exec::Mat& c, const summa_detail::Panels& panels, const Scale& k) {
  const int S = panels.count / panels.group;
  summa_detail::PanelBroadcast<Exec> a_panels(ex, a, Axis::col, MatrixDim::cols, panels, S);
  summa_detail::PanelReduce<Exec> c_panels(ex, c, Axis::row, MatrixDim::rows, panels, S);
  a_panels.start(0);
  for (int s = 0; s < S; ++s) {
    if (s + 1 < S) a_panels.start(s + 1);
    const auto& a_group = a_panels.finish(s);
    if (s >= 2) c_panels.finish(s - 2, k.beta);
    ex.gemm(k.alpha, a_group, true, b, false, 0, c_panels.partial(s));
    c_panels.start(s);
  }
  for (int s = std::max(0, S - 2); s < S; ++s) c_panels.finish(s, k.beta);
}

// Checks the configuration on every rank before any communication, then runs the dataflow.
template <class Exec>
void summa_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
                const Scale& k) {
  const summa_detail::Panels panels =
      summa_detail::plan_panels(p, ex.mesh_rows(), ex.mesh_cols(), o.slices, o.block);
  switch (p.flow) {
    case Dataflow::OS: return summa_os(ex, a, b, c, panels, k);
    case Dataflow::LS: return summa_ls(ex, a, b, c, panels, k);
    case Dataflow::RS: return summa_rs(ex, a, b, c, panels, k);
  }
}

}  // namespace meshslice
