#include "comm/slicing.hpp"

#include <cstdint>
#include <type_traits>

#include "core/bfloat16.hpp"
#include "core/errors.hpp"

namespace meshslice {

void check_slice(std::size_t extent, MatrixDim dim, const SliceSpec& spec,
                 const std::string& what) {
  const char* unit = dim == MatrixDim::cols ? "columns" : "rows";
  require(spec.count >= 1, "slice count S=", spec.count, " must be >= 1");
  require(spec.block >= 1, "block size B=", spec.block, " must be >= 1");
  require(spec.index >= 0 && spec.index < spec.count, "slice index s=", spec.index,
          " is outside 0..S-1 for S=", spec.count);
  const std::size_t unit_size = static_cast<std::size_t>(spec.count) * spec.block;
  require(extent % unit_size == 0, "cannot slice the ", extent, " ", unit, " of the ", what,
          " into S=", spec.count, " sub-shards of B=", spec.block, "-wide blocks: S*B=", unit_size,
          " must divide ", extent, "; choose S and B with S*B dividing ", extent);
}

std::size_t sliced_extent(std::size_t extent, const SliceSpec& spec) { return extent / spec.count; }

namespace detail {

// kToSub: x -> sub (slice), each element converted to sub's type (bf16: rounded). Otherwise
// sub -> x (unslice, one type), adding beta times what x held when kAdd (x is never read when
// not). The branches are plain ifs on constants, each converting its element (a no-op but for
// the rounding slice): nvcc's device lambdas may not first capture a view inside if constexpr.
template <class T, class Sub, class Space, bool kToSub, bool kAdd = false>
void move_slice(const Matrix<T, Space>& x, const Matrix<Sub, Space>& sub, MatrixDim dim,
                const SliceSpec& spec, const typename Space::execution_space& space, T beta = 0) {
  static_assert(kToSub || std::is_same_v<T, Sub>, "unslicing keeps the element type");
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? x.extent(1) : x.extent(0), dim, spec, "shard");
  const std::size_t want_rows = cols ? x.extent(0) : x.extent(0) / spec.count;
  const std::size_t want_cols = cols ? x.extent(1) / spec.count : x.extent(1);
  require(sub.extent(0) == want_rows && sub.extent(1) == want_cols, "sub-shard is ", sub.extent(0),
          "x", sub.extent(1), " but slicing a ", x.extent(0), "x", x.extent(1),
          " shard into S=", spec.count, " along ", dim_name(dim), " gives ", want_rows, "x",
          want_cols);
  const int count = spec.count;
  const int index = spec.index;
  const int block = spec.block;
  using Exec = typename Space::execution_space;
  // Rows outer, columns inner on every backend (a GPU's default is the reverse: neighbouring
  // threads then read elements a row apart instead of neighbouring ones).
  using Policy =
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
  const char* label = kToSub ? "meshslice::slice"
                      : kAdd ? "meshslice::unslice_add"
                             : "meshslice::unslice";
  if (cols) {
    // One work item per (row, block): B contiguous elements in and out, no index division in
    // the inner loop (this kernel sits on the critical path of every MeshSlice step).
    const std::int64_t groups = sub.extent(1) / block;
    Kokkos::parallel_for(
        label, Policy(space, {0, 0}, {std::int64_t(sub.extent(0)), groups}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t g) {
          const std::size_t from = (g * count + index) * block;
          const std::size_t to = g * block;
          for (int b = 0; b < block; ++b) {
            if (kToSub)
              sub(i, to + b) = element_cast<Sub>(x(i, from + b));
            else if (kAdd)
              x(i, from + b) = element_cast<T>(sub(i, to + b)) + beta * x(i, from + b);
            else
              x(i, from + b) = element_cast<T>(sub(i, to + b));
          }
        });
  } else {
    // Whole rows move: (sub row, column) items with contiguous inner runs.
    Kokkos::parallel_for(
        label, Policy(space, {0, 0}, {std::int64_t(sub.extent(0)), std::int64_t(sub.extent(1))}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
          const std::size_t xi = (i / block * count + index) * block + i % block;
          if (kToSub)
            sub(i, j) = element_cast<Sub>(x(xi, j));
          else if (kAdd)
            x(xi, j) = element_cast<T>(sub(i, j)) + beta * x(xi, j);
          else
            x(xi, j) = element_cast<T>(sub(i, j));
        });
  }
}

}  // namespace detail

template <class T, class Space>
void slice_into(const Matrix<T, Space>& x, const Matrix<T, Space>& sub, MatrixDim dim,
                const SliceSpec& spec, const typename Space::execution_space& space) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    // bf16 moves as its 16-bit patterns: slicing converts nothing, and bfloat16 has no
    // arithmetic for move_slice's unslicing branches to compile against.
    auto bits = [](const Matrix<bfloat16, Space>& m) {
      return Matrix<std::uint16_t, Space>(reinterpret_cast<std::uint16_t*>(m.data()), m.extent(0),
                                          m.extent(1));
    };
    detail::move_slice<std::uint16_t, std::uint16_t, Space, true>(bits(x), bits(sub), dim, spec,
                                                                  space);
  } else {
    detail::move_slice<T, T, Space, true>(x, sub, dim, spec, space);
  }
}

template <class Space>
void slice_rounded_into(const Matrix<float, Space>& x, const Matrix<bfloat16, Space>& sub,
                        MatrixDim dim, const SliceSpec& spec,
                        const typename Space::execution_space& space) {
  detail::move_slice<float, bfloat16, Space, true>(x, sub, dim, spec, space);
}

template <class T, class Space>
void unslice_into(const Matrix<T, Space>& sub, const Matrix<T, Space>& x, MatrixDim dim,
                  const SliceSpec& spec, T beta, const typename Space::execution_space& space) {
  if (beta == T(0))
    detail::move_slice<T, T, Space, false, false>(x, sub, dim, spec, space);
  else
    detail::move_slice<T, T, Space, false, true>(x, sub, dim, spec, space, beta);
}

#define MESHSLICE_INSTANTIATE_SLICING(T)                                                          \
  template void slice_into<T, MemSpace>(const Matrix<T, MemSpace>&, const Matrix<T, MemSpace>&,   \
                                        MatrixDim, const SliceSpec&, const ExecSpace&);           \
  template void unslice_into<T, MemSpace>(const Matrix<T, MemSpace>&, const Matrix<T, MemSpace>&, \
                                          MatrixDim, const SliceSpec&, T, const ExecSpace&);

MESHSLICE_INSTANTIATE_SLICING(float)
MESHSLICE_INSTANTIATE_SLICING(double)
template void slice_into<bfloat16, MemSpace>(const Matrix<bfloat16, MemSpace>&,
                                             const Matrix<bfloat16, MemSpace>&, MatrixDim,
                                             const SliceSpec&, const ExecSpace&);
template void slice_rounded_into<MemSpace>(const Matrix<float, MemSpace>&,
                                           const Matrix<bfloat16, MemSpace>&, MatrixDim,
                                           const SliceSpec&, const ExecSpace&);

}  // namespace meshslice
