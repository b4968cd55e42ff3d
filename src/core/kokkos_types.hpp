#pragma once
// The one place that names Kokkos execution and memory spaces. Code elsewhere is templated on
// a memory space or uses these aliases, so a CUDA/HIP build changes nothing but this file's
// defaults.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>

namespace meshslice {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

// A matrix shard: row-major so that a block of whole rows is one contiguous range.
template <class T, class Space = MemSpace>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

template <class T, class Space = MemSpace>
using ConstMatrix = Kokkos::View<const T**, Kokkos::LayoutRight, Space>;

// Rows [first, first + count) of m, in place (a view into m's memory, no copy). A matrix without
// memory (a plan's placeholder shape) gives one of the block's shape.
template <class T, class Space>
Matrix<T, Space> matrix_rows(const Matrix<T, Space>& m, std::size_t first, std::size_t count) {
  if (first + count > m.extent(0))
    throw std::logic_error("matrix_rows: rows past the end of a matrix");
  if (m.data() == nullptr) return Matrix<T, Space>(static_cast<T*>(nullptr), count, m.extent(1));
  return Kokkos::subview(m, Kokkos::make_pair(first, first + count), Kokkos::ALL);
}

// Flat contiguous buffer (communication staging, packed sub-shards).
template <class T, class Space = MemSpace>
using Buffer = Kokkos::View<T*, Space>;

}  // namespace meshslice
