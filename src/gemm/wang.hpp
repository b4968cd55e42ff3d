#pragma once
// Wang et al.'s 2D GEMM (ASPLOS 2023; MeshSlice paper §2.3 and Fig. 4): the collective of ONE mesh
// direction is decomposed into nearest-neighbour SendRecv shifts, each overlapped with the
// partial GEMM of the data already at hand; the collective of the other direction stays a plain,
// non-overlapped collective (the prologue or epilogue of the paper's timeline).
//
// Which direction is decomposed: always the all-gather that feeds the GEMM.
//   OS  C = A B:    A circulates on the col ring (Pc steps); B is all-gathered on the row ring
//                   before the loop.
//   LS  C = A B^T:  B circulates on the row ring (Pr steps); the M/Pr x N partial product is
//                   reduce-scattered on the col ring after the loop.
//   RS  C = A^T B:  A circulates on the col ring (Pc steps); the M x N/Pc partial product is
//                   reduce-scattered on the row ring after the loop.
// Why the all-gather: a decomposed all-gather is pure data movement (the blocks travel unchanged)
// and every step's GEMM reads only data that has already arrived, so the shift of step t+1 runs
// under the GEMM of step t. A decomposed reduce-scatter instead passes a running sum around the
// ring, and each step must add its partial product to the sum it has just received; with GEMM as
// the only arithmetic the executor offers, that GEMM would have to wait for the incoming sum,
// serialising exactly what should overlap. In OS, where both collectives are all-gathers, the col
// ring's A is decomposed: A carries M, the token dimension of a transformer FC layer, which is
// normally the larger operand and so the traffic most worth hiding (and RS decomposes the same
// ring).
//
// S is the loop iteration count after Wang's loop unrolling (the paper's §5 sets it to MeshSlice's
// S): it must divide the ring size R, and every iteration multiplies a window of g = R/S blocks in
// one GEMM. The window that starts on chip r holds the blocks of chips r, r-S, ..., r-(g-1)S; it
// is assembled once by g-1 concurrent shifts (the non-overlapped prologue of unrolling), after
// which the whole window moves one hop per iteration, so iteration `it` on chip r works on blocks
// (r - it - mS) mod R, m < g, and the S windows cover every block exactly once.
// Two-way: as Wang et al. and the authors' code do (x_lo up, x_hi down), each block travels as
// two halves, the first half forward round the ring and the second backward, with a GEMM per
// half-window: every shift carries half the bytes and the ring's two link directions work at
// once. A block whose extent is odd cannot be halved and travels whole, one way.
//   S = R: classic Wang, one block per step, no prologue.
//   S = 1: nothing is left to overlap, and the decomposed direction is a plain all-gather: Wang is
//          then exactly the Collective 2D GEMM, as MeshSlice is at S = 1.
// The block size B of MeshSlice's slicing means nothing here and is ignored.
//
// The window's blocks are not in global order, so the matching rows of the other operand (OS) or
// the matching blocks of the partial product (LS, RS) are gathered/scattered with slice/unslice
// copies of whole blocks: local HBM traffic of about one operand per GEMM, done while the next
// shift is in flight.
#include <array>
#include <vector>

#include "core/errors.hpp"
#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

namespace wang_detail {

// Whether the circulated blocks travel as two halves, one each way round the ring (Wang et al.
// and the authors' code: x_lo up, x_hi down), which halves every shift and uses both directions
// of the ring's links at once: whenever there is a loop (S > 1) and the block splits in two.
inline bool two_way(int S, std::size_t extent) { return S > 1 && extent % 2 == 0; }

// A window of circulated data: at position m along the circulated dimension, piece blocks[m] of
// the operand cut into `parts` pieces of `extent` (blocks, or half-blocks when two-way).
template <class Mat>
struct Window {
  Mat data;
  std::vector<int> blocks;
  int parts = 0;
  std::size_t extent = 0;

  bool in_order() const {
    if (static_cast<int>(blocks.size()) != parts) return false;
    for (int m = 0; m < parts; ++m)
      if (blocks[m] != m) return false;
    return true;
  }
};

// Piece b of a matrix cut into `parts` pieces of `extent` along `dim`, as a slice spec: the
// blocked slicing with S = parts and B = extent picks exactly one contiguous piece.
inline SliceSpec block_of(int parts, int b, std::size_t extent) {
  return {parts, b, static_cast<int>(extent)};
}

// to(position m) = from(piece w.blocks[m]) along `dim`; `piece` holds one piece (unused if the
// window has one).
template <class Exec>
void gather_blocks(Exec& ex, const typename Exec::Mat& from, const typename Exec::Mat& to,
                   const typename Exec::Mat& piece, MatrixDim dim,
                   const Window<typename Exec::Mat>& w) {
  const int g = static_cast<int>(w.blocks.size());
  if (g == 1) return ex.slice(from, to, dim, block_of(w.parts, w.blocks[0], w.extent));
  for (int m = 0; m < g; ++m) {
    ex.slice(from, piece, dim, block_of(w.parts, w.blocks[m], w.extent));
    ex.unslice(piece, to, dim, block_of(g, m, w.extent));
  }
}

// to(piece w.blocks[m]) = from(position m) along `dim`: the inverse of gather_blocks.
template <class Exec>
void scatter_blocks(Exec& ex, const typename Exec::Mat& from, const typename Exec::Mat& to,
                    const typename Exec::Mat& piece, MatrixDim dim,
                    const Window<typename Exec::Mat>& w) {
  const int g = static_cast<int>(w.blocks.size());
  if (g == 1) return ex.unslice(from, to, dim, block_of(w.parts, w.blocks[0], w.extent));
  for (int m = 0; m < g; ++m) {
    ex.slice(from, piece, dim, block_of(g, m, w.extent));
    ex.unslice(piece, to, dim, block_of(w.parts, w.blocks[m], w.extent));
  }
}

// One circulating stream: `local` (a block, or half of one) travelling `way` (+1 or -1) round
// the ring, one window of g pieces per iteration.
template <class Exec>
struct Stream {
  using Mat = typename Exec::Mat;
  int way = 1, half = 0;  // +1 forward or -1 backward; which half of the block it carries
  Mat current;
  std::array<Mat, 2> spare;
  typename Exec::OpId op{};
};

// The decomposed all-gather of `local` along `dim` on `axis`: calls step(it, window) for
// it = 0..S-1 and each stream -- the block, or its two halves travelling opposite ways -- where
// `window` holds, at position m along `dim`, the piece window.blocks[m] (block b being ring rank
// b's shard; half h of block b being piece 2b + h of 2R). The shifts bringing the windows of
// it+1 are in flight while step `it` runs; window buffers are double-buffered so a shift never
// overwrites what a step reads. `local` is never written.
template <class Exec, class Step>
void circulate(Exec& ex, Axis axis, const typename Exec::Mat& local, MatrixDim dim, int S,
               Step&& step) {
  using Mat = typename Exec::Mat;
  const int R = ex.size(axis), r = ex.coord(axis), g = R / S;
  const bool by_cols = dim == MatrixDim::cols;
  const std::size_t e = by_cols ? local.extent(1) : local.extent(0);

  if (S == 1) {  // a single window of every block: the plain all-gather, in ring order
    const Mat all = ex.alloc(by_cols ? local.extent(0) : R * e, by_cols ? R * e : local.extent(1),
                             "wang_gathered");
    ex.wait(ex.start_all_gather(axis, local, all, dim));
    Window<Mat> w{all, std::vector<int>(R), R, e};
    for (int m = 0; m < R; ++m) w.blocks[m] = m;
    step(0, w);
    return;
  }

  const int halves = two_way(S, e) ? 2 : 1;
  const std::size_t pe = e / halves;  // a piece's extent along dim
  const std::size_t piece_rows = by_cols ? local.extent(0) : pe;
  const std::size_t piece_cols = by_cols ? pe : local.extent(1);
  const std::size_t win_rows = by_cols ? piece_rows : g * pe;
  const std::size_t win_cols = by_cols ? g * pe : piece_cols;
  std::array<Stream<Exec>, 2> streams;
  for (int h = 0; h < halves; ++h) {
    Stream<Exec>& st = streams[h];
    st.way = h == 0 ? 1 : -1;
    st.half = h;
    Mat own = local;
    if (halves == 2) {
      own = ex.alloc(piece_rows, piece_cols, "wang_half");
      ex.slice(local, own, dim, block_of(2, h, pe));
    }
    // Prologue of the unrolled loop: window position m <- the piece of ring rank r - way m S.
    Mat first = own;
    if (g > 1) {
      first = ex.alloc(win_rows, win_cols, "wang_window");
      std::vector<Mat> pieces(g);
      std::vector<typename Exec::OpId> ops(g);
      for (int m = 1; m < g; ++m) {
        pieces[m] = ex.alloc(piece_rows, piece_cols, "wang_prologue_piece");
        ops[m] = ex.start_shift(axis, own, pieces[m], st.way * m * S);
      }
      ex.unslice(own, first, dim, block_of(g, 0, pe));
      for (int m = 1; m < g; ++m) {
        ex.wait(ops[m]);
        ex.unslice(pieces[m], first, dim, block_of(g, m, pe));
      }
    }
    // Iteration it receives into spare[it % 2]. The window read at it is `first` (it = 0) or
    // spare[(it-1) % 2], never the receive buffer; `first` is reused as spare[1] once the shift
    // and step of iteration 0 are done with it, unless it is the caller's `local`.
    st.current = first;
    st.spare[0] = ex.alloc(win_rows, win_cols, "wang_window");
    if (S > 2)
      st.spare[1] = (g > 1 || halves == 2) ? first : ex.alloc(win_rows, win_cols, "wang_window");
  }
  for (int it = 0; it < S; ++it) {
    const bool shifting = it + 1 < S;
    for (int h = 0; h < halves && shifting; ++h) {
      Stream<Exec>& st = streams[h];
      st.op = ex.start_shift(axis, st.current, st.spare[it % 2], st.way);
    }
    for (int h = 0; h < halves; ++h) {
      const Stream<Exec>& st = streams[h];
      const int origin = ((r - st.way * it) % R + R) % R;  // the chip this window started on
      Window<Mat> w{st.current, std::vector<int>(g), R * halves, pe};
      for (int m = 0; m < g; ++m)
        w.blocks[m] = halves * (((origin - st.way * m * S) % R + R) % R) + st.half;
      step(it, w);
    }
    if (!shifting) continue;
    for (int h = 0; h < halves; ++h) {
      ex.wait(streams[h].op);
      streams[h].current = streams[h].spare[it % 2];
    }
  }
}

// The extent along the circulated dimension of one piece of a block of extent e (a window holds
// g of them).
inline std::size_t piece_extent(int S, std::size_t e) { return two_way(S, e) ? e / 2 : e; }

}  // namespace wang_detail

// OS: C_ij = sum over windows of A-window (M/Pr x g K/Pc) * the matching K rows of AG_row(B_ij).
template <class Exec>
void wang_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int R = ex.mesh_cols(), S = o.slices, g = R / S;
  const std::size_t kb = p.K / R, n_local = p.N / R, pe = wang_detail::piece_extent(S, kb);
  const Mat b_gathered = ex.alloc(p.K, n_local, "wang_b_gathered");
  const auto b_op = ex.start_all_gather(Axis::row, b, b_gathered, MatrixDim::rows);
  Mat b_window, b_piece;
  if (S > 1) b_window = ex.alloc(g * pe, n_local, "wang_b_window");
  if (S > 1 && g > 1) b_piece = ex.alloc(pe, n_local, "wang_b_piece");
  bool first = true;
  wang_detail::circulate(ex, Axis::col, a, MatrixDim::cols, S,
                         [&](int, const wang_detail::Window<Mat>& a_window) {
                           if (first) ex.wait(b_op);  // B's AG: the plain, exposed collective
                           Mat b_rows = b_gathered;
                           if (!a_window.in_order()) {
                             wang_detail::gather_blocks(ex, b_gathered, b_window, b_piece,
                                                        MatrixDim::rows, a_window);
                             b_rows = b_window;
                           }
                           ex.gemm(k.alpha, a_window.data, false, b_rows, false,
                                   first ? k.beta : 1, c);
                           first = false;
                         });
}

// LS: partial (M/Pr x N) column blocks = A_ij * B-window^T; then C_ij = RdS_col(partial).
template <class Exec>
void wang_ls(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int R = ex.mesh_rows(), S = o.slices, g = R / S;
  const std::size_t nb = p.N / R, m_local = p.M / R, pe = wang_detail::piece_extent(S, nb);
  const Mat partial = ex.alloc(m_local, p.N, "wang_c_partial");
  Mat out, piece;
  if (S > 1) out = ex.alloc(m_local, g * pe, "wang_c_window");
  if (S > 1 && g > 1) piece = ex.alloc(m_local, pe, "wang_c_piece");
  wang_detail::circulate(ex, Axis::row, b, MatrixDim::rows, S,
                         [&](int, const wang_detail::Window<Mat>& b_window) {
                           if (b_window.in_order())
                             return ex.gemm(k.alpha, a, false, b_window.data, true, 0, partial);
                           ex.gemm(k.alpha, a, false, b_window.data, true, 0, out);
                           wang_detail::scatter_blocks(ex, out, partial, piece, MatrixDim::cols,
                                                       b_window);
                         });
  ex.wait(ex.start_partial_reduce_scatter(Axis::col, partial, c, MatrixDim::cols, {1, 0, 1},
                                          k.beta));
}

// RS: partial (M x N/Pc) row blocks = A-window^T * B_ij; then C_ij = RdS_row(partial).
template <class Exec>
void wang_rs(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const int R = ex.mesh_cols(), S = o.slices, g = R / S;
  const std::size_t mb = p.M / R, n_local = p.N / R, pe = wang_detail::piece_extent(S, mb);
  const Mat partial = ex.alloc(p.M, n_local, "wang_c_partial");
  Mat out, piece;
  if (S > 1) out = ex.alloc(g * pe, n_local, "wang_c_window");
  if (S > 1 && g > 1) piece = ex.alloc(pe, n_local, "wang_c_piece");
  wang_detail::circulate(ex, Axis::col, a, MatrixDim::cols, S,
                         [&](int, const wang_detail::Window<Mat>& a_window) {
                           if (a_window.in_order())
                             return ex.gemm(k.alpha, a_window.data, true, b, false, 0, partial);
                           ex.gemm(k.alpha, a_window.data, true, b, false, 0, out);
                           wang_detail::scatter_blocks(ex, out, partial, piece, MatrixDim::rows,
                                                       a_window);
                         });
  ex.wait(ex.start_partial_reduce_scatter(Axis::row, partial, c, MatrixDim::rows, {1, 0, 1},
                                          k.beta));
}

// Checks that S fits the decomposed ring and runs the dataflow's Wang GEMM.
template <class Exec>
void wang_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
               const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
               const Scale& k) {
  const bool row_ring = p.flow == Dataflow::LS;
  const int ring = row_ring ? ex.mesh_rows() : ex.mesh_cols();
  require(o.slices >= 1 && ring % o.slices == 0, "Wang ", dataflow_name(p.flow),
          " decomposes the all-gather of ",
          row_ring ? "B along the row ring (Pr = " : "A along the col ring (Pc = ", ring,
          " chips) into S loop iterations of ", ring, "/S shift steps each; S=", o.slices,
          " must be >= 1 and divide ", ring, ". Choose S among the divisors of ", ring);
  switch (p.flow) {
    case Dataflow::OS: return wang_os(ex, p, a, b, c, o, k);
    case Dataflow::LS: return wang_ls(ex, p, a, b, c, o, k);
    case Dataflow::RS: return wang_rs(ex, p, a, b, c, o, k);
  }
}

}  // namespace meshslice
