#pragma once
// The one place that names Kokkos execution and memory spaces. Code elsewhere is templated on
// a memory space or uses these aliases, so a CUDA/HIP build changes nothing but this file's
// defaults.
//
// Device-correct code: the rules every file keeps, so that the CPU builds CI tests say something
// about a GPU build (meshslice must build and pass its suite on Kokkos 3.4, 4.x and 5.x, Serial,
// OpenMP, CUDA and HIP; scripts/check-kokkos.sh checks one of them).
//   - KOKKOS_LAMBDA only in free functions and public member functions: nvcc refuses an
//     extended lambda in a private or protected one. Kernels that are a class's own business
//     live in a namespace beside it (model/kernels/attention.hpp). CI holds the rule without
//     nvcc: tests/scripts/check_device_lambdas.py.
//   - The host touches device memory only through a host mirror (deep_copy to a HostSpace View),
//     never through a pointer or operator() of a MemSpace View. MPI reads device memory in place
//     only with comm.gpu_aware_mpi; otherwise comm/buffers.hpp's MpiBuffer stages it, and the
//     test aid comm.stage_through_host runs those staged paths on a CPU (CI runs the MPI suite
//     with it).
//   - What a kernel wrote is fenced on the instance that ran it before MPI reads it
//     (RealExecutor::launch fences the compute instance, a collective its own).
//   - Sizes come from elements(), never View::size() (below).
//   - A kernel receives a View as the host laid it out: nvcc 12.9 and later do not with the new
//     View's mdspan members unless built with mdspan's switch, which the configure step finds
//     and sets (cmake/MeshsliceKokkosProbe.cmake).
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <type_traits>

namespace meshslice {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;
// Whether the execution space runs on the host's cores (a CPU backend) rather than on a device:
// what a kernel's shape follows (a row or a run of elements to a thread on a CPU, to a team or a
// thread each on a GPU).
constexpr bool kRunsOnHost = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

// A matrix shard: row-major so that a block of whole rows is one contiguous range.
template <class T, class Space = MemSpace>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

template <class T, class Space = MemSpace>
using ConstMatrix = Kokkos::View<const T**, Kokkos::LayoutRight, Space>;

// The number of elements of a View, from its extents. Kokkos' new View (the default from
// Kokkos 5) answers size() 0 for a View without memory, and a plan is made by rehearsing its
// algorithm on such Views (placeholders: a shape, no memory), so anything sized by size() would
// be sized by the Kokkos version: under the new View a plan's collectives got no scratch. Code
// here asks elements(), never View::size().
template <class V>
std::size_t elements(const V& v) {
  std::size_t n = 1;
  for (std::size_t r = 0; r < static_cast<std::size_t>(V::rank); ++r) n *= v.extent(r);
  return n;
}

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

// Host memory that MPI reads and writes in place of device memory (an MPI that is not
// GPU-aware). Page-locked on a GPU: a copy between it and the device is a DMA the copy engine
// runs on the copying instance's stream while the SMs compute; into pageable memory the driver
// copies through a bounce buffer and the copy blocks the host. Allocated once, with a plan.
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using StagingSpace = Kokkos::HIPHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif
// Whether staging memory is page-locked (resident from its allocation on).
constexpr bool kStagingIsPinned = !std::is_same_v<StagingSpace, Kokkos::HostSpace>;

template <class T>
using HostBuffer = Kokkos::View<T*, StagingSpace>;

}  // namespace meshslice
