#pragma once
// The one place that names Kokkos execution and memory spaces. Code elsewhere is templated on
// a memory space or uses these aliases, so a CUDA/HIP build changes nothing but this file's
// defaults.
#include <Kokkos_Core.hpp>

namespace meshslice {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

// A matrix shard: row-major so that a block of whole rows is one contiguous range.
template <class T, class Space = MemSpace>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

template <class T, class Space = MemSpace>
using ConstMatrix = Kokkos::View<const T**, Kokkos::LayoutRight, Space>;

// Flat contiguous buffer (communication staging, packed sub-shards).
template <class T, class Space = MemSpace>
using Buffer = Kokkos::View<T*, Space>;

}  // namespace meshslice
