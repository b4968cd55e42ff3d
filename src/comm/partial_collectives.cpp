#include "comm/partial_collectives.hpp"

namespace meshslice {

namespace {

template <class T, class Space>
Matrix<T, Space> sub_shard_like(const Matrix<T, Space>& shard, MatrixDim dim,
                                const SliceSpec& slice, const char* label) {
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? shard.extent(1) : shard.extent(0), dim, slice, "shard");
  return Matrix<T, Space>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), cols ? shard.extent(0) : shard.extent(0) / slice.count,
                          cols ? shard.extent(1) / slice.count : shard.extent(1));
}

}  // namespace

template <class T, class Space>
Request ipartial_all_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                            const Matrix<T, Space>& out, MatrixDim dim, const SliceSpec& slice,
                            const CommOptions& options) {
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? local.extent(1) : local.extent(0), dim, slice, "shard");
  const std::size_t rows = cols ? local.extent(0) : local.extent(0) / slice.count;
  const std::size_t width = cols ? local.extent(1) / slice.count : local.extent(1);
  // The sub-shard is sliced straight into its block of the gather buffer.
  return iall_gather_produced<T, Space>(
      ring, rows, width,
      [&](const Matrix<T, Space>& block) { slice_into(local, block, dim, slice); }, out, dim,
      options);
}

template <class T, class Space>
Request ipartial_reduce_scatter(const AxisComm& ring, const Matrix<T, Space>& contribution,
                                const Matrix<T, Space>& shard, MatrixDim dim,
                                const SliceSpec& slice, const CommOptions& options) {
  const auto sub = sub_shard_like(shard, dim, slice, "partial_reduce_scatter_sub");
  Request request = ireduce_scatter(ring, contribution, sub, dim, options);
  request.and_then([=] {
    unslice_into(sub, shard, dim, slice);
    typename Space::execution_space().fence();
  });
  return request;
}

#define MESHSLICE_INSTANTIATE_PARTIAL(T)                                                      \
  template Request ipartial_all_gather<T, MemSpace>(                                         \
      const AxisComm&, const Matrix<T, MemSpace>&, const Matrix<T, MemSpace>&, MatrixDim,    \
      const SliceSpec&, const CommOptions&);                                                 \
  template Request ipartial_reduce_scatter<T, MemSpace>(                                     \
      const AxisComm&, const Matrix<T, MemSpace>&, const Matrix<T, MemSpace>&, MatrixDim,    \
      const SliceSpec&, const CommOptions&);

MESHSLICE_INSTANTIATE_PARTIAL(float)
MESHSLICE_INSTANTIATE_PARTIAL(double)

}  // namespace meshslice
