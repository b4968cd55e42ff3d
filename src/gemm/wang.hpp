#pragma once
// Wang et al.'s 2D GEMM (ASPLOS 2023; MeshSlice paper §2.3 and Fig. 4): the collective of ONE mesh
// direction is decomposed into nearest-neighbour SendRecv shifts, each overlapped with the
// partial GEMM of the data already at hand; the collective of the other direction stays a plain,
// non-overlapped collective (the prologue or epilogue of the paper's timeline).
//
// Which direction is decomposed (GemmOptions::wang_ring): by default the col ring's collective
// in every dataflow, as in the MeshSlice authors' code (hwnam831/meshslice, TensorParallel.py:
// Wang_OS, Wang_LS, and Wang_RS's branch in use):
//   OS  C = A B:    A circulates on the col ring (Pc steps); B is all-gathered on the row ring
//                   before the loop.
//   LS  C = A B^T:  B is all-gathered on the row ring before the loop; the reduce-scatter of the
//                   M/Pr x N partial product on the col ring is decomposed into running sums
//                   that circulate (Pc steps), the authors' Wang_LS.
//   RS  C = A^T B:  A circulates on the col ring (Pc steps); the M x N/Pc partial product is
//                   reduce-scattered on the row ring after the loop.
// The col ring's collective carries M, the token dimension of a transformer FC layer, normally
// the largest in training, so its traffic is usually the one most worth hiding. Not always: the
// row ring's can be the larger (LS with K > M, RS with a large M x N/Pc partial product), and
// Wang et al.'s decomposition applies to either direction (the authors' Wang_RS has both
// branches). WangRing::row decomposes the row ring's instead, the col ring's staying whole:
//   OS  B circulates on the row ring (Pr steps); A is all-gathered on the col ring first.
//   LS  B circulates on the row ring; the partial product is reduce-scattered on the col ring
//       after the loop.
//   RS  A is all-gathered on the col ring first; the reduce-scatter of the M x N/Pc partial
//       product on the row ring is decomposed into running sums (Pr steps).
// The emulator's sweep runs the authors' choice, and reports Wang with the ring chosen per GEMM
// beside it.
//
// Decomposed all-gather (`circulate`): pure data movement, the blocks travel unchanged and
// every step's GEMM reads only data that has already arrived, so the shift of step it+1 runs
// under the GEMM of step it.
// Decomposed reduce-scatter (`circulate_sums`): a running sum of each output block travels
// round the ring and every chip it visits adds its partial product. The GEMM of iteration it
// writes a fresh buffer (beta 0) and so needs nothing from the wire: it runs while the running
// sum of iteration it-1 travels; then the chip waits for that sum, adds it (an unslice with
// beta 1) and sends the total on. Only the add sits between the arrival and the next shift, and
// the last sums land on the chips that own them, which write them into C with beta.
//
// S is the loop iteration count after Wang's loop unrolling (the paper's §5 sets it to MeshSlice's
// S): it must divide the ring size R, and every iteration multiplies a window of g = R/S blocks in
// one GEMM.
//   All-gather: the window that starts on chip r holds the blocks of chips r, r-S, ..., r-(g-1)S;
//   it is assembled once by g-1 concurrent shifts (the non-overlapped prologue of unrolling),
//   after which the whole window moves one hop per iteration, so iteration `it` on chip r works
//   on blocks (r - it - mS) mod R, m < g, and the S windows cover every block exactly once.
//   Reduce-scatter, its mirror image: the window of running sums that ends on chip r holds the
//   blocks of chips r, r+S, ..., r+(g-1)S; it starts S-1 hops before r, so iteration `it` on chip
//   r works on the window that ends on r' = r + S-1-it, and after the loop position m holds the
//   sum over S consecutive chips of block r + mS. An epilogue of g-1 concurrent shifts sends
//   each position m to its owner, which adds the g pieces it then holds into C.
// Two-way: as Wang et al. and the authors' code do (x_lo up, x_hi down; y_lo up, y_hi down),
// each block travels as two halves, the first half forward round the ring as above and the
// second backward (the same formulas with the signs of it, S-1-it and mS flipped): every shift
// carries half the bytes and the ring's two link directions work at once. Each half-window has
// a GEMM of its own, except in OS, where both are copied side by side into one GEMM, since every
// OS GEMM reads and writes the whole of C. A block whose extent is odd cannot be halved and
// travels whole, one way.
//   S = R: classic Wang, one block per step, no prologue or epilogue.
//   S = 1: nothing is left to overlap, and the decomposed collective is a plain all-gather or
//          reduce-scatter: Wang is then exactly the Collective 2D GEMM, as MeshSlice is at S = 1.
// The block size B of MeshSlice's slicing means nothing here and is ignored.
//
// The window's blocks are not in global order, so the matching rows of the other operand or the
// matching blocks of the partial product (col ring: OS, LS / RS; row ring: OS, RS / LS) are
// gathered/scattered with slice/unslice copies of whole blocks (WindowBlocks): local HBM traffic
// of about one operand per GEMM, done while the next shift is in flight. A window of one piece
// along the rows needs no copy: the GEMM reads or writes those rows in place (WindowBlocks).
#include <array>
#include <stdexcept>
#include <string>
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

// The extent along the circulated dimension of one piece of a block of extent e (a window holds
// g of them).
inline std::size_t piece_extent(int S, std::size_t e) { return two_way(S, e) ? e / 2 : e; }

// Whether one step's window holds both streams' pieces: asked for (circulate's merge_streams)
// and there are two streams. circulate and WindowBlocks both size their buffers by it.
inline bool streams_merged(bool merge_streams, int S, std::size_t e) {
  return merge_streams && two_way(S, e);
}

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

// A buffer `along` long along `dim` and `across` wide the other way.
template <class Exec>
typename Exec::Mat alloc_along(Exec& ex, MatrixDim dim, std::size_t along, std::size_t across,
                               const char* label) {
  return dim == MatrixDim::rows ? ex.alloc(along, across, label) : ex.alloc(across, along, label);
}

// What the decomposed all-gather and reduce-scatter share: the ring (R chips, this one at r),
// the unrolled loop (S iterations over windows of g = R/S pieces), whether the blocks travel as
// two halves, and the shapes of a piece and of a window, for blocks shaped like `block` (this
// chip's block, cut along `dim`).
struct RingLoop {
  int R = 1, r = 0, g = 1, halves = 1;
  std::size_t pe = 0;  // a piece's extent along dim (a block, or half of one)
  std::size_t piece_rows = 0, piece_cols = 0, win_rows = 0, win_cols = 0;

  template <class Exec>
  RingLoop(Exec& ex, Axis axis, MatrixDim dim, const typename Exec::Mat& block, int S)
      : R(ex.size(axis)), r(ex.coord(axis)), g(R / S) {
    const bool by_cols = dim == MatrixDim::cols;
    const std::size_t extent = block.extent(by_cols ? 1 : 0);
    const std::size_t across = block.extent(by_cols ? 0 : 1);
    halves = two_way(S, extent) ? 2 : 1;
    pe = piece_extent(S, extent);
    piece_rows = by_cols ? across : pe;
    piece_cols = by_cols ? pe : across;
    win_rows = by_cols ? across : g * pe;
    win_cols = by_cols ? g * pe : across;
  }

  // The streams of the loop, one per half, each knowing its way round the ring.
  template <class Stream>
  std::array<Stream, 2> streams() const {
    std::array<Stream, 2> s;
    for (int h = 0; h < halves; ++h) {
      s[h].way = way(h);
      s[h].half = h;
    }
    return s;
  }

  // The stream carrying half h travels forward (h = 0) or backward (h = 1) round the ring.
  static int way(int h) { return h == 0 ? 1 : -1; }
  int ring_rank(int x) const { return (x % R + R) % R; }

  // The window over `data` whose position m holds half h of block (base + stride m) mod R (block
  // b being ring rank b's share; half h of it piece halves b + h of halves R).
  template <class Mat>
  Window<Mat> window(const Mat& data, int base, int stride, int h) const {
    Window<Mat> w{data, std::vector<int>(g), R * halves, pe};
    for (int m = 0; m < g; ++m) w.blocks[m] = halves * ring_rank(base + stride * m) + h;
    return w;
  }
};

// One circulating stream, travelling `way` (+1 or -1) round the ring, one window of g pieces
// per iteration: in circulate, `local` (a block, or half of one), `current` being the window at
// hand and `spare` the receive buffers; in circulate_sums, running sums, `current` being the
// receive buffer and `spare` the buffers the partial products are written into.
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
// With `merge_streams`, two streams' windows are copied side by side into one buffer (the
// forward stream's g pieces, then the backward one's) and step runs once per iteration on all
// 2g of them: one GEMM instead of two where each GEMM costs more than the copy (OS, whose every
// GEMM accumulates into the whole of C, reading and writing it once more).
template <class Exec, class Step>
void circulate(Exec& ex, Axis axis, const typename Exec::Mat& local, MatrixDim dim, int S,
               bool merge_streams, Step&& step) {
  using Mat = typename Exec::Mat;
  const RingLoop L(ex, axis, dim, local, S);
  const int g = L.g, halves = L.halves;

  if (S == 1) {  // a single window of every block: the plain all-gather, in ring order
    const Mat all = ex.alloc(L.win_rows, L.win_cols, "wang_gathered");
    ex.wait(ex.start_all_gather(axis, local, all, dim));
    step(0, L.window(all, 0, 1, 0));
    return;
  }

  // Prologue of the unrolled loop: window position m <- the piece of ring rank r - way m S. The
  // shifts of both streams are started before any is waited for, so the two directions' shifts
  // are in flight together.
  auto streams = L.streams<Stream<Exec>>();
  std::array<std::vector<Mat>, 2> pieces;
  std::array<std::vector<typename Exec::OpId>, 2> ops;
  for (int h = 0; h < halves; ++h) {
    Stream<Exec>& st = streams[h];
    Mat own = local;
    if (halves == 2) {
      own = ex.alloc(L.piece_rows, L.piece_cols, "wang_half");
      ex.slice(local, own, dim, block_of(2, h, L.pe));
    }
    st.current = own;
    if (g == 1) continue;
    pieces[h].resize(g);
    ops[h].resize(g);
    for (int m = 1; m < g; ++m) {
      pieces[h][m] = ex.alloc(L.piece_rows, L.piece_cols, "wang_prologue_piece");
      ops[h][m] = ex.start_shift(axis, own, pieces[h][m], st.way * m * S);
    }
  }
  for (int h = 0; h < halves; ++h) {
    Stream<Exec>& st = streams[h];
    if (g > 1) {
      const Mat first = ex.alloc(L.win_rows, L.win_cols, "wang_window");
      ex.unslice(st.current, first, dim, block_of(g, 0, L.pe));
      for (int m = 1; m < g; ++m) {
        ex.wait(ops[h][m]);
        ex.unslice(pieces[h][m], first, dim, block_of(g, m, L.pe));
      }
      st.current = first;
    }
    // Iteration it receives into spare[it % 2]. The window read at it is `current` (it = 0) or
    // spare[(it-1) % 2], never the receive buffer; the first window is reused as spare[1] once
    // the shift and step of iteration 0 are done with it, unless it is the caller's `local`.
    st.spare[0] = ex.alloc(L.win_rows, L.win_cols, "wang_window");
    if (S > 2)
      st.spare[1] =
          (g > 1 || halves == 2) ? st.current : ex.alloc(L.win_rows, L.win_cols, "wang_window");
  }
  const bool by_cols = dim == MatrixDim::cols;
  const bool merge = streams_merged(merge_streams, S, local.extent(by_cols ? 1 : 0));
  const Mat both = merge ? alloc_along(ex, dim, 2 * g * L.pe, by_cols ? L.win_rows : L.win_cols,
                                       "wang_both_windows")
                         : Mat();
  for (int it = 0; it < S; ++it) {
    const bool shifting = it + 1 < S;
    for (int h = 0; h < halves && shifting; ++h) {
      Stream<Exec>& st = streams[h];
      st.op = ex.start_shift(axis, st.current, st.spare[it % 2], st.way);
    }
    // The window that started on chip r - way it: position m came from r - way (it + m S).
    auto window = [&](const Stream<Exec>& st) {
      return L.window(st.current, L.r - st.way * it, -st.way * S, st.half);
    };
    if (merge) {
      Window<Mat> merged{both, {}, L.R * halves, L.pe};
      for (int h = 0; h < halves; ++h) {
        ex.unslice(streams[h].current, both, dim, block_of(2, h, g * L.pe));
        const std::vector<int> blocks = window(streams[h]).blocks;
        merged.blocks.insert(merged.blocks.end(), blocks.begin(), blocks.end());
      }
      step(it, merged);
    } else {
      for (int h = 0; h < halves; ++h) step(it, window(streams[h]));
    }
    if (!shifting) continue;
    for (int h = 0; h < halves; ++h) {
      ex.wait(streams[h].op);
      streams[h].current = streams[h].spare[it % 2];
    }
  }
}

// The decomposed reduce-scatter into `out` along `dim` on `axis` (the authors' Wang_LS):
// out = the ring's sum of every chip's partial product of out's blocks + beta out. Calls
// step(it, window) for it = 0..S-1 and each stream -- the blocks, or their two halves whose
// running sums travel opposite ways -- and step must write into window.data (beta 0) this chip's
// partial product of piece window.blocks[m] at position m along `dim` (block b being ring rank
// b's shard of out; half h of block b being piece 2b + h of 2R). While step `it` runs, the
// running sums of it-1 are in flight; then each stream adds the sums it receives to the partial
// products and sends them on. Step writes into spare[it % 2], the shift of it-1 reads the other
// one and writes `current`, which is read only after it has arrived.
template <class Exec, class Step>
void circulate_sums(Exec& ex, Axis axis, const typename Exec::Mat& out, MatrixDim dim, int S,
                    double beta, Step&& step) {
  using Mat = typename Exec::Mat;
  const RingLoop L(ex, axis, dim, out, S);
  const int g = L.g, halves = L.halves;

  if (S == 1) {  // a single window of every block: the plain reduce-scatter, in ring order
    const Mat partial = ex.alloc(L.win_rows, L.win_cols, "wang_c_partial");
    step(0, L.window(partial, 0, 1, 0));
    ex.wait(ex.start_partial_reduce_scatter(axis, partial, out, dim, {1, 0, 1}, beta));
    return;
  }

  auto streams = L.streams<Stream<Exec>>();
  for (int h = 0; h < halves; ++h) {
    streams[h].current = ex.alloc(L.win_rows, L.win_cols, "wang_sum_received");
    for (Mat& sum : streams[h].spare) sum = ex.alloc(L.win_rows, L.win_cols, "wang_sum");
  }
  // x = received + x over a whole window: the blocked slicing with one slice of one block.
  const SliceSpec whole = block_of(1, 0, g * L.pe);
  for (int it = 0; it < S; ++it) {
    // The window that ends on chip r + way (S-1-it): position m is block r' + way m S there.
    for (int h = 0; h < halves; ++h) {
      const Stream<Exec>& st = streams[h];
      step(it, L.window(st.spare[it % 2], L.r + st.way * (S - 1 - it), st.way * S, st.half));
    }
    for (int h = 0; h < halves && it > 0; ++h) {
      Stream<Exec>& st = streams[h];
      ex.wait(st.op);
      ex.unslice(st.current, st.spare[it % 2], dim, whole, 1.0);
    }
    for (int h = 0; h < halves && it + 1 < S; ++h) {  // both ways start together
      Stream<Exec>& st = streams[h];
      st.op = ex.start_shift(axis, st.spare[it % 2], st.current, st.way);
    }
  }
  // Epilogue of the unrolled loop: position m, the sum over S chips of block r + way m S, goes
  // to its owner by g-1 concurrent shifts; each chip adds its own position 0 and the g-1 pieces
  // it receives into out. pieces[h][m] holds position m, received[h][m] what comes back.
  std::array<std::vector<Mat>, 2> pieces, received;
  std::array<std::vector<typename Exec::OpId>, 2> ops;
  for (int h = 0; h < halves && g > 1; ++h) {
    const Mat& sums = streams[h].spare[(S - 1) % 2];
    pieces[h].resize(g);
    received[h].resize(g);
    ops[h].resize(g);
    for (int m = 0; m < g; ++m) pieces[h][m] = ex.alloc(L.piece_rows, L.piece_cols, "wang_piece");
    for (int m = 1; m < g; ++m) {
      received[h][m] = ex.alloc(L.piece_rows, L.piece_cols, "wang_piece");
      ex.slice(sums, pieces[h][m], dim, block_of(g, m, L.pe));
      ops[h][m] = ex.start_shift(axis, pieces[h][m], received[h][m], streams[h].way * m * S);
    }
    ex.slice(sums, pieces[h][0], dim, block_of(g, 0, L.pe));
  }
  for (int h = 0; h < halves; ++h) {
    const SliceSpec mine = block_of(halves, h, L.pe);  // this stream's half of out
    ex.unslice(g > 1 ? pieces[h][0] : streams[h].spare[(S - 1) % 2], out, dim, mine, beta);
    for (int m = 1; m < g; ++m) {
      ex.wait(ops[h][m]);
      ex.unslice(received[h][m], out, dim, mine, 1.0);
    }
  }
}

// A window's blocks of `whole` (R blocks of `block` along `dim`, in ring order), in window
// order. In place where they lie together: `whole` itself when the window is in order, a view of
// its rows when the window is one piece along the rows (shards are row-major, so its rows are
// contiguous: LS and RS at S = R, the authors' loop, read and write their blocks without a copy).
// Otherwise a buffer of their own, which gather() fills from `whole` (col ring: B's K rows for
// A's window in OS, B's N rows for C's window in LS; row ring: A's K columns for B's window in
// OS, A's M columns for C's window in RS) or scatter() empties into it (the partial product of
// circulate_into_partial).
template <class Exec>
class WindowBlocks {
 public:
  using Mat = typename Exec::Mat;
  // `merged_streams`: the windows hold both streams' pieces (circulate's merge_streams).
  WindowBlocks(Exec& ex, const Mat& whole, MatrixDim dim, int R, int S, std::size_t block,
               bool merged_streams = false)
      : ex_(ex), whole_(whole), dim_(dim) {
    const std::size_t pe = piece_extent(S, block);
    const std::size_t pieces = R / S * (streams_merged(merged_streams, S, block) ? 2 : 1);
    const std::size_t across = whole.extent(dim == MatrixDim::rows ? 1 : 0);
    if (S == 1 || row_view(pieces)) return;  // every window in place: no buffer
    window_ = alloc_along(ex, dim, pieces * pe, across, "wang_window_blocks");
    if (pieces > 1) piece_ = alloc_along(ex, dim, pe, across, "wang_window_piece");
  }
  // The window's blocks of `whole`, read.
  Mat gather(const Window<Mat>& w) {
    if (in_place(w)) return place(w);
    check_fits(w);
    gather_blocks(ex_, whole_, window_, piece_, dim_, w);
    return window_;
  }
  // Where the window's blocks are to be written; scatter(w) then puts them in their places.
  Mat target(const Window<Mat>& w) const {
    if (in_place(w)) return place(w);
    check_fits(w);
    return window_;
  }
  void scatter(const Window<Mat>& w) {
    if (!in_place(w)) scatter_blocks(ex_, window_, whole_, piece_, dim_, w);
  }

 private:
  // A window of one piece along the rows is a view of `whole`'s rows.
  bool row_view(std::size_t pieces) const { return dim_ == MatrixDim::rows && pieces == 1; }
  bool in_place(const Window<Mat>& w) const { return w.in_order() || row_view(w.blocks.size()); }
  Mat place(const Window<Mat>& w) const {
    if (w.in_order()) return whole_;
    return ex_.rows(whole_, static_cast<std::size_t>(w.blocks[0]) * w.extent, w.extent);
  }
  // The buffer was sized from the block extent and merged_streams, the window by circulate: a
  // disagreement would write past its end.
  void check_fits(const Window<Mat>& w) const {
    const std::size_t along = window_.extent(dim_ == MatrixDim::rows ? 0 : 1);
    if (w.blocks.size() * w.extent != along)
      throw std::logic_error("Wang: a window of " + std::to_string(w.blocks.size()) +
                             " pieces does not fit its matching-blocks buffer");
  }
  Exec& ex_;
  Mat whole_, window_, piece_;
  MatrixDim dim_;
};

// The decomposed all-gather of `moving` (along `dim` on `axis`) feeding a partial product that
// the other ring, `other`, reduce-scatters whole after the loop (RS on the col ring, LS on the
// row ring): product(window, out) writes a window's product, whose blocks go to their places
// along `partial_dim` of the partial_rows x partial_cols partial product; then
// C = RdS(partial) + beta C.
template <class Exec, class Product>
void circulate_into_partial(Exec& ex, Axis axis, const typename Exec::Mat& moving, MatrixDim dim,
                            int S, const typename Exec::Mat& c, Axis other, MatrixDim partial_dim,
                            std::size_t partial_rows, std::size_t partial_cols, double beta,
                            Product&& product) {
  using Mat = typename Exec::Mat;
  const int R = ex.size(axis);
  const Mat partial = ex.alloc(partial_rows, partial_cols, "wang_c_partial");
  WindowBlocks<Exec> blocks(ex, partial, partial_dim, R, S,
                            (partial_dim == MatrixDim::rows ? partial_rows : partial_cols) / R);
  // Each window's product is written fresh, no C round trip to save: the streams stay apart.
  circulate(ex, axis, moving, dim, S, false, [&](int, const Window<Mat>& w) {
    product(w.data, blocks.target(w));
    blocks.scatter(w);
  });
  ex.wait(ex.start_partial_reduce_scatter(other, partial, c, partial_dim, {1, 0, 1}, beta));
}

}  // namespace wang_detail

// Below, `ring` is the ring Wang decomposes (GemmOptions::wang_ring) and `other` the one whose
// collective stays whole.

// OS: the ring's operand circulates (A's K/Pc column blocks on the col ring, B's K/Pr row blocks
// on the row ring) while the other is all-gathered whole on the other ring before the loop; each
// window multiplies the matching K blocks of the gathered operand.
template <class Exec>
void wang_os(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
             const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
             const Scale& k) {
  using Mat = typename Exec::Mat;
  const bool row = o.wang_ring == WangRing::row;
  const Axis ring = row ? Axis::row : Axis::col, other = row ? Axis::col : Axis::row;
  const MatrixDim moving_k = row ? MatrixDim::rows : MatrixDim::cols;  // K in the moving operand
  const MatrixDim gathered_k = row ? MatrixDim::cols : MatrixDim::rows;
  const int R = ex.size(ring);
  const Mat gathered = row ? ex.alloc(p.M / ex.mesh_rows(), p.K, "wang_a_gathered")
                           : ex.alloc(p.K, p.N / ex.mesh_cols(), "wang_b_gathered");
  const auto gather = ex.start_all_gather(other, row ? a : b, gathered, gathered_k);
  wang_detail::WindowBlocks<Exec> matching(ex, gathered, gathered_k, R, o.slices, p.K / R, true);
  bool first = true;
  // Both streams' windows in one GEMM: every GEMM accumulates into all of C.
  wang_detail::circulate(ex, ring, row ? b : a, moving_k, o.slices, true,
                         [&](int, const wang_detail::Window<Mat>& w) {
                           if (first) ex.wait(gather);  // the plain, exposed collective
                           const Mat matched = matching.gather(w);
                           ex.gemm(k.alpha, row ? matched : w.data, false, row ? w.data : matched,
                                   false, first ? k.beta : 1, c);
                           first = false;
                         });
}

// The reduce-scatter of C decomposed (LS on the col ring, the authors' Wang_LS; RS on the row
// ring): the operand that does not carry C's blocks is all-gathered whole on the other ring first
// (B's N rows in LS, A's M columns in RS), and each window of C's blocks is the product of the
// other operand and the matching blocks of the gathered one.
template <class Exec>
void wang_decomposed_reduce_scatter(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                                    const typename Exec::Mat& b, const typename Exec::Mat& c,
                                    const GemmOptions& o, const Scale& k) {
  using Mat = typename Exec::Mat;
  const bool row = o.wang_ring == WangRing::row;  // RS
  const Axis ring = row ? Axis::row : Axis::col, other = row ? Axis::col : Axis::row;
  const MatrixDim gathered_dim = row ? MatrixDim::cols : MatrixDim::rows;
  const int R = ex.size(ring);
  const Mat gathered = row ? ex.alloc(p.K / ex.mesh_rows(), p.M, "wang_a_gathered")
                           : ex.alloc(p.N, p.K / ex.mesh_cols(), "wang_b_gathered");
  // The plain, exposed collective; every window's GEMM reads it.
  ex.wait(ex.start_all_gather(other, row ? a : b, gathered, gathered_dim));
  wang_detail::WindowBlocks<Exec> matching(ex, gathered, gathered_dim, R, o.slices,
                                           (row ? p.M : p.N) / R);
  wang_detail::circulate_sums(ex, ring, c, row ? MatrixDim::rows : MatrixDim::cols, o.slices,
                              k.beta, [&](int, const wang_detail::Window<Mat>& w) {
                                const Mat matched = matching.gather(w);
                                if (row)
                                  return ex.gemm(k.alpha, matched, true, b, false, 0, w.data);
                                ex.gemm(k.alpha, a, false, matched, true, 0, w.data);
                              });
}

// The all-gather of the ring's operand decomposed and the reduce-scatter of C left whole on the
// other ring, after the loop (RS on the col ring: A's column blocks circulate, the M x N/Pc
// partial product's row blocks are reduce-scattered; LS on the row ring: B's row blocks
// circulate, the M/Pr x N partial product's column blocks are reduce-scattered).
template <class Exec>
void wang_exposed_reduce_scatter(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                                 const typename Exec::Mat& b, const typename Exec::Mat& c,
                                 const GemmOptions& o, const Scale& k) {
  using Mat = typename Exec::Mat;
  if (o.wang_ring == WangRing::row)  // LS
    return wang_detail::circulate_into_partial(
        ex, Axis::row, b, MatrixDim::rows, o.slices, c, Axis::col, MatrixDim::cols,
        p.M / ex.mesh_rows(), p.N, k.beta, [&](const Mat& b_window, const Mat& out) {
          ex.gemm(k.alpha, a, false, b_window, true, 0, out);
        });
  wang_detail::circulate_into_partial(  // RS
      ex, Axis::col, a, MatrixDim::cols, o.slices, c, Axis::row, MatrixDim::rows, p.M,
      p.N / ex.mesh_cols(), k.beta, [&](const Mat& a_window, const Mat& out) {
        ex.gemm(k.alpha, a_window, true, b, false, 0, out);
      });
}

// Checks that S fits the decomposed ring and runs the dataflow's Wang GEMM.
template <class Exec>
void wang_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
               const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o,
               const Scale& k) {
  const bool row = o.wang_ring == WangRing::row;
  const int ring = row ? ex.mesh_rows() : ex.mesh_cols();
  const bool sums = p.flow == (row ? Dataflow::RS : Dataflow::LS);
  require(o.slices >= 1 && ring % o.slices == 0, "Wang ", dataflow_name(p.flow), " decomposes ",
          sums  ? "the reduce-scatter of C"
          : row ? "the all-gather of B"
                : "the all-gather of A",
          " along the ", wang_ring_name(o.wang_ring), " ring (", row ? "Pr" : "Pc", " = ", ring,
          " chips) into S loop iterations of ", ring, "/S shift steps each; S=", o.slices,
          " must be >= 1 and divide ", ring, ". Choose S among the divisors of ", ring);
  switch (p.flow) {
    case Dataflow::OS: return wang_os(ex, p, a, b, c, o, k);
    case Dataflow::LS:
      return row ? wang_exposed_reduce_scatter(ex, p, a, b, c, o, k)
                 : wang_decomposed_reduce_scatter(ex, p, a, b, c, o, k);
    case Dataflow::RS:
      return row ? wang_decomposed_reduce_scatter(ex, p, a, b, c, o, k)
                 : wang_exposed_reduce_scatter(ex, p, a, b, c, o, k);
  }
}

}  // namespace meshslice
