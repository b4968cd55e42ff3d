#pragma once
// Caller-provided scratch for the collectives, so that a planned collective allocates nothing.
//
// A collective needs memory beyond its inputs and outputs: blocks packed for MPI (column
// gathers and scatters), the ring's receive buffer, a reduce's accumulator, a partial
// reduce-scatter's sub-shard, and host mirrors when MPI cannot read device memory. Each
// collective says how much through its *_scratch() function below (an element count on the
// device and on the host) and takes a CommScratch of at least that size; it carves its buffers
// from it in a fixed order with a ScratchCarver. Called without scratch (ad-hoc use: tests,
// benchmarks of single collectives), the carver allocates what is asked instead.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "comm/comm_options.hpp"
#include "core/huge_pages.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

// Elements of scratch a collective needs.
struct ScratchNeed {
  std::size_t device = 0;
  std::size_t host = 0;
  ScratchNeed& operator+=(const ScratchNeed& o) {
    device += o.device;
    host += o.host;
    return *this;
  }
};

template <class T, class Space>
struct CommScratch {
  Buffer<T, Space> device;
  HostBuffer<T> host;
  bool provided = false;  // false: the collective allocates what it needs (ad-hoc use)
  // The instance the collective's own kernels (packing, unpacking, copies) run on and fence:
  // an executor gives its communication instance, so packing can overlap its compute instance.
  typename Space::execution_space space{};
};

template <class T, class Space>
CommScratch<T, Space> make_scratch(const ScratchNeed& need, const std::string& label) {
  CommScratch<T, Space> s;
  s.provided = true;
  if (need.device > 0) s.device = huge_page_buffer<T, Space>(label, need.device);
  if (need.host > 0) s.host = huge_page_buffer<T, StagingSpace>(label + "_host", need.host);
  return s;
}

// The same memory as scratch for a collective of another element type U (a bf16 gather
// carved from a float plan's workspace): as many U as fit in its bytes.
template <class U, class T, class Space>
CommScratch<U, Space> scratch_viewed_as(const CommScratch<T, Space>& s) {
  if constexpr (std::is_same_v<U, T>) {
    return s;
  } else {
    CommScratch<U, Space> u;
    u.provided = s.provided;
    u.space = s.space;
    u.device = Buffer<U, Space>(reinterpret_cast<U*>(s.device.data()),
                                s.device.extent(0) * sizeof(T) / sizeof(U));
    u.host = HostBuffer<U>(reinterpret_cast<U*>(s.host.data()),
                           s.host.extent(0) * sizeof(T) / sizeof(U));
    return u;
  }
}

// Elements of T that hold `n` elements of U.
template <class T, class U>
constexpr std::size_t elements_holding(std::size_t n) {
  return (n * sizeof(U) + sizeof(T) - 1) / sizeof(T);
}

// Whether MPI must go through host mirrors: device memory the host cannot touch, and an MPI
// that is not GPU-aware; or the test aid CommOptions::stage_through_host.
template <class Space>
bool mpi_staged(const CommOptions& options) {
  constexpr bool host_reachable = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space>::accessible;
  return options.stage_through_host || (!host_reachable && !options.gpu_aware_mpi);
}

// Hands out consecutive pieces of a CommScratch (or fresh allocations when none was provided).
template <class T, class Space>
class ScratchCarver {
 public:
  explicit ScratchCarver(const CommScratch<T, Space>& scratch) : scratch_(scratch) {}

  // The instance the collective's own kernels run on.
  const typename Space::execution_space& space() const { return scratch_.space; }

  Buffer<T, Space> device(std::size_t n, const char* label) {
    if (!scratch_.provided) return huge_page_buffer<T, Space>(label, n);
    return carve(scratch_.device, device_used_, n, label);
  }
  HostBuffer<T> host(std::size_t n, const char* label) {
    if (!scratch_.provided) return huge_page_buffer<T, StagingSpace>(label, n);
    return carve(scratch_.host, host_used_, n, label);
  }

 private:
  template <class V>
  static V carve(const V& from, std::size_t& used, std::size_t n, const char* label) {
    if (used + n > from.extent(0))
      throw std::logic_error(std::string("collective scratch too small for '") + label +
                             "': the plan's *_scratch() and the collective disagree");
    V piece(from.data() + used, n);
    used += n;
    return piece;
  }

  const CommScratch<T, Space>& scratch_;
  std::size_t device_used_ = 0;
  std::size_t host_used_ = 0;
};

// What each collective of comm/collectives.hpp carves, for a ring of `parts` ranks and the
// element counts named. Kept next to the carving order of collectives.cpp; a disagreement is
// a logic_error from the carver, which every planned collective in the tests would hit.
// `n`: elements of one rank's block (the gather's local shard, the scatter's output shard);
// `element_bytes`: the size of one (the ring reduce-scatter receives one packet at a time).
ScratchNeed all_gather_scratch(int parts, std::size_t n, MatrixDim dim, bool staged);
ScratchNeed reduce_scatter_scratch(int parts, std::size_t n, MatrixDim dim,
                                   const CommOptions& options, bool staged,
                                   std::size_t element_bytes);
// `n`: elements of the sub-shard slice s writes.
ScratchNeed partial_reduce_scatter_scratch(int parts, std::size_t n, MatrixDim dim,
                                           const CommOptions& options, bool staged,
                                           std::size_t element_bytes);
// `n`: elements of the whole buffer.
ScratchNeed all_reduce_scratch(int parts, std::size_t n, const CommOptions& options, bool staged,
                               std::size_t element_bytes);
ScratchNeed broadcast_scratch(std::size_t n, bool staged);
ScratchNeed reduce_scratch(std::size_t n, const CommOptions& options, bool staged,
                           std::size_t element_bytes);
ScratchNeed shift_scratch(std::size_t n, bool staged);
ScratchNeed point_to_point_scratch(std::size_t n, bool staged);

}  // namespace meshslice
