#pragma once
// Where each element of a parameter lives on the mesh. A weight is kept in Pr x Pc blocks of its
// stored matrix, which is W (in x out) or W^T, as its layer's dataflow wants; the norm gains are
// split like the hidden dimension (over mesh columns) and copied on every mesh row.
//
// A weight whose outputs are parts side by side (QKV's [q | k | v], SwiGLU's FF1 [gate | up])
// stores its output columns grouped, so that the block of the output that one chip holds has
// every part of the same features: the stored output columns form `blocks` groups (the blocks
// the layer's output is split into over the mesh), group j holding, part after part, the j-th
// share of each part. QKV: Pc groups (attention works in the standard layout, whole heads per
// mesh column) of [q | k | v] of the same heads. SwiGLU's FF1: groups as FF1's output is split
// (Pc standard, Pr transposed) of [gate | up] of the same features, which the activation pairs
// element by element. Logical columns are the parts side by side, as the reference has them.
#include <cstddef>

#include "core/kokkos_compat.hpp"

namespace meshslice {

// A parameter's logical shape: rows x cols (a gain 1 x H).
struct ParamShape {
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// Output columns stored in groups (see above); `blocks` 0: in logical order.
struct GroupedColumns {
  static constexpr int kMaxParts = 3;
  std::size_t blocks = 0;
  std::size_t parts[kMaxParts] = {0, 0, 0};  // each part's logical width (0: unused)

  // The logical column of stored output column s.
  KOKKOS_INLINE_FUNCTION std::size_t logical(std::size_t s) const {
    if (blocks == 0) return s;
    std::size_t group = 0;
    for (int p = 0; p < kMaxParts; ++p) group += parts[p] / blocks;
    const std::size_t block = s / group;
    std::size_t within = s % group, offset = 0;
    for (int p = 0; p < kMaxParts; ++p) {
      const std::size_t share = parts[p] / blocks;
      if (within < share) return offset + block * share + within;
      within -= share;
      offset += parts[p];
    }
    return s;  // past the parts: not reached for s < the parts' total
  }
};

// Maps an element of a chip's shard to the logical (row, col) of the parameter.
struct StoredLayout {
  std::size_t row0 = 0, col0 = 0;  // the shard's first stored row and column
  bool transposed = false;         // stored as the logical matrix's transpose
  GroupedColumns outputs;          // the output columns' grouping (QKV, SwiGLU's FF1)

  KOKKOS_INLINE_FUNCTION void logical(std::size_t r, std::size_t c, std::size_t& row,
                                      std::size_t& col) const {
    const std::size_t sr = row0 + r, sc = col0 + c;
    row = transposed ? sc : sr;
    col = outputs.logical(transposed ? sr : sc);
  }
};

}  // namespace meshslice
