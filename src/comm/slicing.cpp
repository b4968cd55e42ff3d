#include "comm/slicing.hpp"

#include <cstdint>

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

std::size_t sliced_extent(std::size_t extent, const SliceSpec& spec) {
  return extent / spec.count;
}

namespace detail {

template <class T, class Space, bool kToSub>
void move_slice(const Matrix<T, Space>& x, const Matrix<T, Space>& sub, MatrixDim dim,
                const SliceSpec& spec) {
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? x.extent(1) : x.extent(0), dim, spec, "shard");
  const std::size_t want_rows = cols ? x.extent(0) : x.extent(0) / spec.count;
  const std::size_t want_cols = cols ? x.extent(1) / spec.count : x.extent(1);
  require(sub.extent(0) == want_rows && sub.extent(1) == want_cols, "sub-shard is ",
          sub.extent(0), "x", sub.extent(1), " but slicing a ", x.extent(0), "x", x.extent(1),
          " shard into S=", spec.count, " along ", dim_name(dim), " gives ", want_rows, "x",
          want_cols);
  const int count = spec.count;
  const int index = spec.index;
  const int block = spec.block;
  using Exec = typename Space::execution_space;
  using Policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>;
  const char* label = kToSub ? "meshslice::slice" : "meshslice::unslice";
  if (cols) {
    // One work item per (row, block): B contiguous elements in and out, no index division in
    // the inner loop (this kernel sits on the critical path of every MeshSlice step).
    const std::int64_t groups = sub.extent(1) / block;
    Kokkos::parallel_for(
        label, Policy({0, 0}, {std::int64_t(sub.extent(0)), groups}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t g) {
          const std::size_t from = (g * count + index) * block;
          const std::size_t to = g * block;
          for (int b = 0; b < block; ++b) {
            if (kToSub)
              sub(i, to + b) = x(i, from + b);
            else
              x(i, from + b) = sub(i, to + b);
          }
        });
  } else {
    // Whole rows move: (sub row, column) items with contiguous inner runs.
    Kokkos::parallel_for(
        label, Policy({0, 0}, {std::int64_t(sub.extent(0)), std::int64_t(sub.extent(1))}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
          const std::size_t xi = (i / block * count + index) * block + i % block;
          if (kToSub)
            sub(i, j) = x(xi, j);
          else
            x(xi, j) = sub(i, j);
        });
  }
}

}  // namespace detail

template <class T, class Space>
void slice_into(const Matrix<T, Space>& x, const Matrix<T, Space>& sub, MatrixDim dim,
                const SliceSpec& spec) {
  detail::move_slice<T, Space, true>(x, sub, dim, spec);
}

template <class T, class Space>
void unslice_into(const Matrix<T, Space>& sub, const Matrix<T, Space>& x, MatrixDim dim,
                  const SliceSpec& spec) {
  detail::move_slice<T, Space, false>(x, sub, dim, spec);
}

#define MESHSLICE_INSTANTIATE_SLICING(T)                                                      \
  template void slice_into<T, MemSpace>(const Matrix<T, MemSpace>&, const Matrix<T, MemSpace>&, \
                                        MatrixDim, const SliceSpec&);                          \
  template void unslice_into<T, MemSpace>(const Matrix<T, MemSpace>&,                          \
                                          const Matrix<T, MemSpace>&, MatrixDim,               \
                                          const SliceSpec&);

MESHSLICE_INSTANTIATE_SLICING(float)
MESHSLICE_INSTANTIATE_SLICING(double)

}  // namespace meshslice
