#pragma once
// Blocked slicing of shards (MeshSlice paper, Alg. 2).
//
// A shard is cut along `dim` into blocks of B contiguous columns (rows); sub-shard s of S takes
// every S-th block starting at block s and packs them contiguously:
//   slice along cols:  sub(i, g*B + b) = X(i, (g*S + s)*B + b),  g < C/(S*B), b < B
// so X.reshape(R, C/(S*B), S, B)[:, :, s, :] exactly as the paper writes it. Blocks keep memory
// accesses contiguous (a TPU reads 128x8 tiles: B = 8). unslice is the inverse scatter.
#include <string>

#include "comm/comm_options.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

struct bfloat16;  // core/bfloat16.hpp

struct SliceSpec {
  int count = 1;  // S: number of sub-shards
  int index = 0;  // s: which one, 0 <= s < S
  int block = 1;  // B: contiguous columns (rows) per block
};

// UserError unless `extent` (the sliced dimension's length) splits into S sub-shards of whole
// B-blocks and 0 <= s < S. `what` names the matrix in the message.
void check_slice(std::size_t extent, MatrixDim dim, const SliceSpec& spec, const std::string& what);

// Shape of sub-shard of a rows x cols shard.
std::size_t sliced_extent(std::size_t extent, const SliceSpec& spec);

// sub = slice spec.index of x, as a kernel on `space` (not fenced: the caller fences before
// anything else reads sub). T: float, double or bfloat16.
template <class T, class Space>
void slice_into(const Matrix<T, Space>& x, const Matrix<T, Space>& sub, MatrixDim dim,
                const SliceSpec& spec,
                const typename Space::execution_space& space = typename Space::execution_space());

// The same, each element rounded to bf16 on the way (a bf16 run's GEMM operand, sliced for its
// gather: one pass over the data instead of a slice and a rounding).
template <class Space>
void slice_rounded_into(
    const Matrix<float, Space>& x, const Matrix<bfloat16, Space>& sub, MatrixDim dim,
    const SliceSpec& spec,
    const typename Space::execution_space& space = typename Space::execution_space());

// slice spec.index of x = sub + beta * (slice spec.index of x); with beta = 0, x is not read.
template <class T, class Space>
void unslice_into(const Matrix<T, Space>& sub, const Matrix<T, Space>& x, MatrixDim dim,
                  const SliceSpec& spec, T beta = T(0),
                  const typename Space::execution_space& space = typename Space::execution_space());

// Allocating forms with the paper's names.
template <class T, class Space>
Matrix<T, Space> slice_col(const Matrix<T, Space>& x, int count, int index, int block) {
  check_slice(x.extent(1), MatrixDim::cols, {count, index, block}, "matrix");
  Matrix<T, Space> sub(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("slice_col")),
                       x.extent(0), x.extent(1) / count);
  slice_into(x, sub, MatrixDim::cols, {count, index, block});
  return sub;
}

template <class T, class Space>
Matrix<T, Space> slice_row(const Matrix<T, Space>& x, int count, int index, int block) {
  check_slice(x.extent(0), MatrixDim::rows, {count, index, block}, "matrix");
  Matrix<T, Space> sub(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("slice_row")),
                       x.extent(0) / count, x.extent(1));
  slice_into(x, sub, MatrixDim::rows, {count, index, block});
  return sub;
}

}  // namespace meshslice
