#pragma once
// The distributed transpose of a matrix kept in Pr x Pc blocks (chip (i, j) holds block (i, j)):
// R x C in, its C x R transpose out, again in Pr x Pc blocks. It is the training driver's
// re-layout: an activation whose tokens are split over mesh rows and hidden over mesh columns
// becomes one whose hidden is split over rows and tokens over columns (what a W-stationary
// layer takes), and back.
//
// Each chip sends every other chip of the row x col group (the tp ring) the part of its block
// that lands in that chip's output block, already transposed, so the receiver only copies
// contiguous runs: one all-to-all of R*C/P elements per chip, never a gather of the whole
// matrix. Planned: the exchange buffers are allocated at construction, a run allocates nothing.
//
//     BlockTranspose<float> relayout(torus, rows, cols);
//     relayout.run(space, x, xt);   // xt = x^T, both in Pr x Pc blocks
#include <cstddef>
#include <vector>

#include "core/kokkos_types.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

template <class T>
class BlockTranspose {
 public:
  // UserError unless R and C split evenly over both mesh axes (each is a row and a column
  // dimension on one side of the transpose). `staged`: MPI exchanges host mirrors of the
  // buffers (comm/comm_scratch.hpp's mpi_staged: device memory without a GPU-aware MPI, or the
  // stage_through_host test aid).
  BlockTranspose(const Torus& torus, std::size_t rows, std::size_t cols, bool staged);

  // out = in^T: in is this chip's R/Pr x C/Pc block, out its C/Pr x R/Pc block. Kernels run on
  // `space`; returns once out is written (fenced).
  void run(const ExecSpace& space, const Matrix<T>& in, const Matrix<T>& out);
  // The planned send and receive buffers (and their host staging where MPI needs it).
  std::size_t bytes() const;

  // Elements this chip sends to other chips per run (what a re-layout costs on the links).
  std::size_t elements_sent() const { return elements_sent_; }
  // The same for chip (i, j) of a pr x pc mesh, without planning the exchange (a data-free
  // model's re-layout cost); the constructor's UserError when the sizes do not split.
  static std::size_t elements_sent(std::size_t rows, std::size_t cols, int pr, int pc, int i,
                                   int j);

 private:
  // The rectangle of the input matrix (global indices) one chip pair exchanges.
  struct Piece {
    std::size_t row0 = 0, rows = 0, col0 = 0, cols = 0;  // in the input matrix's coordinates
    std::size_t offset = 0;                              // in the packed buffer
  };
  // Chip (i, j)'s pieces, indexed by tp rank, and what they add up to.
  struct Plan {
    std::vector<Piece> sends, receives;
    std::size_t send_total = 0, receive_total = 0, elements_sent = 0;
  };
  static Plan plan(std::size_t rows, std::size_t cols, int pr, int pc, int i, int j);
  const Torus& torus_;
  std::size_t rows_, cols_;
  std::vector<Piece> sends_, receives_;  // indexed by tp rank
  std::vector<int> send_counts_, send_offsets_, receive_counts_, receive_offsets_;
  Buffer<T> send_, receive_;
  bool staged_;
  HostBuffer<T> send_host_, receive_host_;  // staged only
  std::size_t elements_sent_ = 0;
};

}  // namespace meshslice
