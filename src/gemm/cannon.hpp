#pragma once
// Cannon's algorithm (MeshSlice paper §2.3.2, Fig. 4) in the three dataflows, on a square
// q x q mesh where chip (i, j) holds block (i, j) of every matrix. Blocks are skewed once, then
// q systolic steps each multiply the blocks a chip holds and shift them one chip along the
// torus rings, the shift of the next step's blocks overlapping the current GEMM (double
// buffers: step t computes on set t % 2 while set (t+1) % 2 receives). Index arithmetic below is
// mod q; shift(d) on a ring moves every block d chips: out = in of ring rank (rank - d).
//
// OS, C stationary: C_ij = sum_k A_ik B_kj. Skew A's mesh row i left by i and B's mesh column j
// up by j, so chip (i, j) holds A_{i,k} and B_{k,j} with k = i + j; each step adds their product
// to C_ij and moves A left and B up by one, which advances k by one. C needs no movement.
//
// LS and RS cannot keep C in place: C_in = sum_k A_ik B_nk^T (LS) needs B_nk, which lives at
// chip (n, k), at chip (i, n) -- a transpose across the mesh. Instead the large input stays (A
// in LS, B in RS: the paper's X- and W-stationary dataflows), the other input moves as in OS,
// and C's partial sums travel, collecting one term per chip they visit:
//   LS: chip (i, j) keeps A_ij. At step t it holds B_{n,j} and the partial of C_{i,n}, with
//       n = i + j + t, and adds A_ij B_{n,j}^T. B moves up its mesh column (skew: up by j), the
//       partial moves left along the mesh row, so after q steps it has visited every chip
//       (i, k), i.e. summed every k. It then sits at column n - i + 1 and moves home to column
//       n with one shift by i - 1.
//   RS: the mirror image. Chip (i, j) keeps B_ij, holds A_{i,m} and the partial of C_{m,j} with
//       m = i + j + t, and adds A_{i,m}^T B_ij. A moves left along its mesh row (skew: left by
//       i), the partial moves up the mesh column, and finally home by j - 1.
// A partial sum is needed by the very next GEMM on its next chip, so a single moving partial
// per chip leaves nothing to overlap its shift with. The partials are therefore split into two
// independent streams (halves of C's block, with the matching halves of the moving input): the
// shift of one stream's partial runs while the other stream's GEMM computes. With an odd block
// extent (no even split) or a 1x1 mesh there is one stream and the partial's shift is exposed.
//
// Two ways round: in every dataflow the second stream (OS: halves of A's K block and B's K rows)
// travels the other way round the rings -- A right and B down in OS, so step t holds
// k = i + j - t; in LS/RS the moving input and the partials likewise, which brings the partials
// home by coord + 1 instead of coord - 1 -- so the two streams' shifts use both directions of
// every link at once, each carrying half the bytes.
//
// Cannon has no slicing: the slice count S and block size B of GemmOptions do not apply.
#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "comm/slicing.hpp"
#include "core/errors.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

namespace cannon_detail {

// Starts moving `in` by `displacement` chips along `axis` into `out`. A whole number of turns
// around the ring (every chip of the ring computes the same displacement, so they all agree)
// is a local copy and sends nothing.
template <class Exec>
std::optional<typename Exec::OpId> start_move(Exec& ex, Axis axis, const typename Exec::Mat& in,
                                              const typename Exec::Mat& out, int displacement) {
  const int ring = ex.size(axis);
  if (displacement % ring == 0) {
    ex.copy(in, out);
    return std::nullopt;
  }
  return ex.start_shift(axis, in, out, displacement);
}

template <class Exec>
void finish_move(Exec& ex, std::optional<typename Exec::OpId>& op) {
  if (op) ex.wait(*op);
  op.reset();
}

// The direction stream h travels: the first one as Cannon's, the second the other way round.
inline int direction(int stream) { return stream == 0 ? -1 : 1; }

// The skew displacement stream h asks for: `skew` itself for the first stream, the same chip
// reached the other way round (skew + q) for the second. Either way a shift takes the shorter
// way; when both are as short (halfway round) the two streams then use the two directions of
// the links instead of queueing on one.
inline int skew_way(int stream, int skew, int q) { return stream == 0 ? skew : skew + q; }

// How LS and RS move their non-stationary input and C's partial sums (see the file comment).
struct MovingOutput {
  Axis input_axis;      // ring the moving input travels on
  MatrixDim input_dim;  // the moving input's dimension that is split into streams
  Axis partial_axis;    // ring C's partial sums travel on
  MatrixDim c_dim;      // C's dimension matching input_dim
  int skew;             // the moving input's initial shift
  int coord;            // the chip's coordinate whose step takes the partials home: home is
                        // coord + d, d the stream's direction (-1 or +1)
};

// Runs the q systolic steps of LS or RS. `product(input_stream, accumulate, partial)` computes
// partial (+)= alpha times the stationary input times one stream of the moving input; the
// partials land in C as C = partials + beta C.
template <class Exec, class Product>
void moving_output_steps(Exec& ex, const typename Exec::Mat& moving, const typename Exec::Mat& c,
                         const MovingOutput& plan, double beta, Product product) {
  using Mat = typename Exec::Mat;
  using Move = std::optional<typename Exec::OpId>;
  const int q = ex.size(plan.partial_axis);
  const bool input_cols = plan.input_dim == MatrixDim::cols;
  const bool c_cols = plan.c_dim == MatrixDim::cols;
  const std::size_t split = moving.extent(input_cols ? 1 : 0);
  const int streams = q > 1 && split % 2 == 0 ? 2 : 1;
  const int stream_width = static_cast<int>(split / streams);

  std::vector<std::array<Mat, 2>> input(streams), partial(streams);
  std::vector<Move> input_move(streams), partial_move(streams);
  for (int h = 0; h < streams; ++h) {
    for (int set = 0; set < 2; ++set) {
      input[h][set] = input_cols ? ex.alloc(moving.extent(0), stream_width, "cannon_input")
                                 : ex.alloc(stream_width, moving.extent(1), "cannon_input");
      partial[h][set] = c_cols ? ex.alloc(c.extent(0), stream_width, "cannon_partial")
                               : ex.alloc(stream_width, c.extent(1), "cannon_partial");
    }
    // Skew: pack stream h into the buffer step 1 will receive into (free until then) and shift
    // it into step 0's buffer.
    ex.slice(moving, input[h][1], plan.input_dim, {streams, h, stream_width});
    input_move[h] =
        start_move(ex, plan.input_axis, input[h][1], input[h][0], skew_way(h, plan.skew, q));
  }
  for (int t = 0; t < q; ++t) {
    const int cur = t % 2, next = 1 - cur;
    for (int h = 0; h < streams; ++h) {
      const int d = direction(h);
      finish_move(ex, input_move[h]);
      finish_move(ex, partial_move[h]);  // this stream's partial has arrived from its last chip
      if (t + 1 < q)
        input_move[h] = start_move(ex, plan.input_axis, input[h][cur], input[h][next], d);
      product(input[h][cur], t > 0, partial[h][cur]);
      // On to the next chip, overlapping the other stream's GEMM; after the last step, home.
      const int step = t + 1 < q ? d : plan.coord + d;
      partial_move[h] = start_move(ex, plan.partial_axis, partial[h][cur], partial[h][next], step);
    }
  }
  for (int h = 0; h < streams; ++h) {
    finish_move(ex, partial_move[h]);
    ex.unslice(partial[h][q % 2], c, plan.c_dim, {streams, h, stream_width}, beta);
  }
}

}  // namespace cannon_detail

// OS: A and B move, C stays; as two streams (halves of A's column block and B's matching row
// block) travelling opposite ways when the block splits evenly.
template <class Exec>
void cannon_os(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
               const typename Exec::Mat& c, const Scale& k) {
  using Move = std::optional<typename Exec::OpId>;
  const int q = ex.size(Axis::row), i = ex.coord(Axis::row), j = ex.coord(Axis::col);
  const std::size_t split = a.extent(1);  // A's K block, B's K rows
  const int streams = q > 1 && split % 2 == 0 ? 2 : 1;
  const int width = static_cast<int>(split / streams);
  std::vector<std::array<typename Exec::Mat, 2>> a_buf(streams), b_buf(streams);
  std::vector<Move> a_move(streams), b_move(streams);
  for (int h = 0; h < streams; ++h) {
    for (int set = 0; set < 2; ++set) {
      a_buf[h][set] = ex.alloc(a.extent(0), width, "cannon_a");
      b_buf[h][set] = ex.alloc(width, b.extent(1), "cannon_b");
    }
    // Skew (the prologue: nothing can be computed before it lands): A_{i,i+j} and B_{i+j,j},
    // packed into the buffers step 1 will receive into (free until then).
    ex.slice(a, a_buf[h][1], MatrixDim::cols, {streams, h, width});
    ex.slice(b, b_buf[h][1], MatrixDim::rows, {streams, h, width});
    a_move[h] = cannon_detail::start_move(ex, Axis::col, a_buf[h][1], a_buf[h][0],
                                          cannon_detail::skew_way(h, -i, q));
    b_move[h] = cannon_detail::start_move(ex, Axis::row, b_buf[h][1], b_buf[h][0],
                                          cannon_detail::skew_way(h, -j, q));
  }
  // Step t holds k = i + j - d t of each stream (d its direction): the first stream moves A left
  // and B up, the second A right and B down, both covering every k in q steps.
  for (int t = 0; t < q; ++t) {
    const int cur = t % 2, next = 1 - cur;
    for (int h = 0; h < streams; ++h) {
      cannon_detail::finish_move(ex, a_move[h]);
      cannon_detail::finish_move(ex, b_move[h]);
      if (t + 1 < q) {
        const int d = cannon_detail::direction(h);
        a_move[h] = cannon_detail::start_move(ex, Axis::col, a_buf[h][cur], a_buf[h][next], d);
        b_move[h] = cannon_detail::start_move(ex, Axis::row, b_buf[h][cur], b_buf[h][next], d);
      }
      ex.gemm(k.alpha, a_buf[h][cur], false, b_buf[h][cur], false, t == 0 && h == 0 ? k.beta : 1,
              c);
    }
  }
}

// LS: A stays; B moves up its mesh column, C's partials move left along the mesh row.
template <class Exec>
void cannon_ls(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
               const typename Exec::Mat& c, const Scale& k) {
  const int i = ex.coord(Axis::row), j = ex.coord(Axis::col);
  const cannon_detail::MovingOutput plan{Axis::row, MatrixDim::rows, Axis::col, MatrixDim::cols, -j,
                                         i};
  cannon_detail::moving_output_steps(
      ex, b, c, plan, k.beta,
      [&](const typename Exec::Mat& b_stream, bool accumulate, const typename Exec::Mat& partial) {
        ex.gemm(k.alpha, a, false, b_stream, true, accumulate ? 1 : 0, partial);
      });
}

// RS: B stays; A moves left along its mesh row, C's partials move up the mesh column.
template <class Exec>
void cannon_rs(Exec& ex, const typename Exec::Mat& a, const typename Exec::Mat& b,
               const typename Exec::Mat& c, const Scale& k) {
  const int i = ex.coord(Axis::row), j = ex.coord(Axis::col);
  const cannon_detail::MovingOutput plan{Axis::col, MatrixDim::cols, Axis::row, MatrixDim::rows, -i,
                                         j};
  cannon_detail::moving_output_steps(
      ex, a, c, plan, k.beta,
      [&](const typename Exec::Mat& a_stream, bool accumulate, const typename Exec::Mat& partial) {
        ex.gemm(k.alpha, a_stream, true, b, false, accumulate ? 1 : 0, partial);
      });
}

// Checks the mesh on every rank before any communication, then runs the dataflow.
template <class Exec>
void cannon_gemm(Exec& ex, const GemmProblem& p, const typename Exec::Mat& a,
                 const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions&,
                 const Scale& k) {
  const int rows = ex.mesh_rows(), cols = ex.mesh_cols();
  require(rows == cols, "Cannon needs a square mesh; this one is ", rows, "x", cols,
          "; use summa, meshslice or collective, which run on any mesh shape, or run Cannon on "
          "a square mesh");
  switch (p.flow) {
    case Dataflow::OS: return cannon_os(ex, a, b, c, k);
    case Dataflow::LS: return cannon_ls(ex, a, b, c, k);
    case Dataflow::RS: return cannon_rs(ex, a, b, c, k);
  }
}

}  // namespace meshslice
