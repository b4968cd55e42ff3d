#pragma once
// What both slice pipelines (slice_gathers.hpp, slice_scatters.hpp) keep: the matrix whose
// slices travel, the axis and dimension they travel along, the slicing, and two alternating
// buffers with the op last started on each. Slice s uses buffer s % 2.
#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

#include "comm/slicing.hpp"
#include "gemm/algorithm.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// Buffer: the executor's Mat (reduce-scatters' partial products) or its Gathered (gathers' GEMM
// operands).
template <class Exec, class Buffer>
class SliceBuffers {
 public:
  using Mat = typename Exec::Mat;

 protected:
  // `sliced`: the matrix (gathers: the GEMM operand) sliced along `dim` into o.slices pieces of
  // o.block-blocks; the buffers are rows x cols, as many as slices can be in flight (at most
  // two).
  SliceBuffers(Exec& ex, Axis axis, const Buffer& sliced, MatrixDim dim, std::size_t rows,
               std::size_t cols, const GemmOptions& o, const char* label)
      : ex_(ex), axis_(axis), sliced_(sliced), dim_(dim), options_(o) {
    for (int i = 0; i < in_flight(); ++i) {
      if constexpr (std::is_same_v<Buffer, Mat>)
        buffers_[i] = ex.alloc(rows, cols, label);
      else
        buffers_[i] = ex.alloc_gathered(rows, cols, label);
    }
  }

  int in_flight() const { return std::min(options_.slices, 2); }
  SliceSpec spec(int s) const { return {options_.slices, s, options_.block}; }

  Exec& ex_;
  Axis axis_;
  Buffer sliced_;
  MatrixDim dim_;
  GemmOptions options_;
  std::array<Buffer, 2> buffers_;
  std::array<typename Exec::OpId, 2> ops_{};
};

}  // namespace meshslice
