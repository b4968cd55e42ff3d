#pragma once
// Where each element of a parameter lives on the mesh. A weight is kept in Pr x Pc blocks of its
// stored matrix, which is W (in x out) or W^T, as its layer's dataflow wants; the norm gains are
// split like the hidden dimension (over mesh columns) and copied on every mesh row.
//
// The QKV weight's output columns are stored permuted so that the block of its output that one
// mesh column holds is [q | k | v] of the same heads: with H/Pc = w, stored column s of block
// j = s / 3w holds logical column part * H + j * w + (s mod w), part = (s mod 3w) / w. Logical
// columns are part * H + head * head_dim + d (part 0, 1, 2 = q, k, v), as the reference has them.
#include <cstddef>

#include "core/kokkos_compat.hpp"

namespace meshslice {

// Logical output column of the stored QKV column s (hidden H, Pc mesh columns).
KOKKOS_INLINE_FUNCTION std::size_t qkv_logical_column(std::size_t s, std::size_t hidden,
                                                      std::size_t mesh_cols) {
  const std::size_t w = hidden / mesh_cols, block = s / (3 * w), within = s % (3 * w);
  return (within / w) * hidden + block * w + within % w;
}

// Maps an element of a chip's shard to the logical (row, col) of the parameter.
struct StoredLayout {
  std::size_t row0 = 0, col0 = 0;  // the shard's first stored row and column
  bool transposed = false;         // stored as the logical matrix's transpose
  std::size_t qkv_hidden = 0;      // > 0: the QKV weight's permuted output columns (hidden H)
  std::size_t mesh_cols = 1;       // Pc, for the permutation

  KOKKOS_INLINE_FUNCTION void logical(std::size_t r, std::size_t c, std::size_t& row,
                                      std::size_t& col) const {
    const std::size_t sr = row0 + r, sc = col0 + c;
    row = transposed ? sc : sr;
    col = transposed ? sr : sc;
    if (qkv_hidden > 0) col = qkv_logical_column(col, qkv_hidden, mesh_cols);
  }
};

}  // namespace meshslice
