#pragma once
// Blocking sums (and maxima) of small device matrices over a mesh axis: the training step's
// per-token statistics (RMSNorm, the vocabulary's softmax) and norm-gain gradients (host scalars:
// comm/host_collectives.hpp). They are a few kilobytes and sit on the step's critical path, so
// they go through MPI_Allreduce on a host mirror allocated once, not through the ring
// collectives' pipelines.
//
//     SmallAllReduce<float> reduce(max_elements);
//     reduce.sum(space, torus.axis(Axis::col), dot);   // dot = sum over the ring of dot
//     reduce.max(space, torus.axis(Axis::col), m);     // m = maximum over the ring of m
#include <mpi.h>

#include <cstddef>
#include <string>
#include <utility>

#include "comm/host_collectives.hpp"
#include "comm/mpi_datatype.hpp"
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

template <class T>
class SmallAllReduce {
 public:
  explicit SmallAllReduce(std::size_t max_elements)
      : host_(Kokkos::ViewAllocateWithoutInitializing("small_all_reduce"), max_elements) {}

  // x = the sum of x over `ring`, in place (x contiguous, at most max_elements).
  void sum(const ExecSpace& space, const AxisComm& ring, const Matrix<T>& x) {
    reduce(space, ring, x, MPI_SUM);
  }
  // x = the element-wise maximum of x over `ring`, in place (a softmax's row maxima).
  void max(const ExecSpace& space, const AxisComm& ring, const Matrix<T>& x) {
    reduce(space, ring, x, MPI_MAX);
  }

 private:
  void reduce(const ExecSpace& space, const AxisComm& ring, const Matrix<T>& x, MPI_Op op) {
    const std::size_t n = elements(x);
    MESHSLICE_ASSERT(n <= host_.extent(0), "SmallAllReduce: ", n, " elements, planned for ",
                     host_.extent(0));
    if (ring.size() == 1) return;
    const auto host = Kokkos::subview(host_, std::make_pair(std::size_t(0), n));
    const Kokkos::View<T*, MemSpace, Kokkos::MemoryUnmanaged> flat(x.data(), n);
    Kokkos::deep_copy(space, host, flat);
    fence(space, "small_all_reduce");
    reduce_over(ring, host.data(), n, mpi_datatype<T>(), op);
    Kokkos::deep_copy(space, flat, host);
    fence(space, "small_all_reduce");
  }

  HostBuffer<T> host_;
};

}  // namespace meshslice
