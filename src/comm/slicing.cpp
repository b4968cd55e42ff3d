#include "comm/slicing.hpp"

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

// Column (row) of the shard that column (row) `j` of sub-shard `index` comes from.
KOKKOS_INLINE_FUNCTION std::size_t source_index(std::size_t j, int count, int index, int block) {
  const std::size_t group = j / block;
  const std::size_t offset = j % block;
  return (group * count + index) * block + offset;
}

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
  const std::size_t width = sub.extent(1);
  Kokkos::parallel_for(
      kToSub ? "meshslice::slice" : "meshslice::unslice",
      Kokkos::RangePolicy<typename Space::execution_space>(0, sub.size()),
      KOKKOS_LAMBDA(const std::size_t flat_index) {
        const std::size_t i = flat_index / width;
        const std::size_t j = flat_index % width;
        const std::size_t xi = cols ? i : source_index(i, count, index, block);
        const std::size_t xj = cols ? source_index(j, count, index, block) : j;
        if (kToSub)
          sub(i, j) = x(xi, xj);
        else
          x(xi, xj) = sub(i, j);
      });
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
