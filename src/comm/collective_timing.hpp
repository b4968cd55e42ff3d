#pragma once
// Timing one collective the way a plan runs it: its scratch sized and allocated once, every
// buffer touched before timing, so the timed calls allocate nothing and fault in no pages (first
// touch, not the network, otherwise dominates large messages). Shared by meshslice-bench's
// collectives mode and meshslice-tune's calibration.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "comm/collective.hpp"
#include "comm/comm_scratch.hpp"
#include "core/huge_pages.hpp"
#include "core/timing.hpp"

namespace meshslice {

// The collectives it times: all_gather, all_gather_in_place, reduce_scatter, all_reduce,
// broadcast, reduce, shift. all_gather_in_place is the all-gather MeshSlice's GEMMs run
// (iall_gather_produced): this rank's shard is produced straight into its block of the output,
// and that producing is not timed, only the P-1 shards that cross the ring (with MPI_IN_PLACE's
// meaning; nccl-tests reports its in-place all-gather the same way). all_gather copies its
// separate input into the output as well, which on 2 ranks is one copy per shard received.
const std::vector<std::string>& timed_collectives();

// Shard shape for a message of `bytes` of `element`-byte values: rows of up to 1024 elements.
std::pair<std::size_t, std::size_t> shard_shape(std::size_t bytes, std::size_t element);

// The collective a name of timed_collectives() times: all_gather_in_place is an all_gather.
struct TimedCollective {
  CommKind kind = CommKind::all_gather;
  bool in_place = false;
};
TimedCollective timed_collective(const std::string& op);

// `op` on the ring of `axis` with a rows x cols shard per rank (the whole buffer for broadcast,
// reduce and all_reduce), ready to run: its buffers allocated as the GEMM plans allocate them
// (huge-page advice, then first touch) and owned by the returned function, which `torus` must
// outlive; shift sends it `displacement` ranks along.
template <class T>
std::function<void()> prepared_collective(const std::string& op, const Torus& torus, Axis axis,
                                          std::size_t rows, std::size_t cols, MatrixDim dim,
                                          const CommOptions& options, int displacement = 1) {
  const TimedCollective timed = timed_collective(op);
  const AxisComm& ring = torus.axis(axis);
  const int p = ring.size();
  const bool along_rows = dim == MatrixDim::rows;
  auto touched = [](const char* label, std::size_t r, std::size_t c, T value) {
    const auto m = huge_page_matrix<T>(label, r, c);
    Kokkos::deep_copy(m, value);
    return m;
  };
  // Only the buffers `op` uses: the shard, and the P-shard stack or one more shard.
  const auto shard = touched("shard", rows, cols, T(1));
  Collective<Matrix<T, MemSpace>> c{timed.kind, axis, shard, shard, dim, std::nullopt, 0, 0, 0};
  const auto stacked = [&] {
    return touched("stacked", along_rows ? p * rows : rows, along_rows ? cols : p * cols, T(1));
  };
  if (c.kind == CommKind::all_gather) c.out = stacked();
  if (c.kind == CommKind::reduce_scatter) c.in = stacked();
  if (c.kind == CommKind::all_reduce || c.kind == CommKind::reduce || c.kind == CommKind::shift)
    c.out = touched("other", rows, cols, T(0));
  if (c.kind == CommKind::shift) c.peer = displacement;  // broadcast's and reduce's root: 0
  const auto scratch = make_scratch<T, MemSpace>(
      scratch_need(c, p, options, mpi_staged<MemSpace>(options), sizeof(T)),
      "timed_collective_scratch");
  Kokkos::deep_copy(scratch.device, T(0));
  Kokkos::deep_copy(scratch.host, T(0));
  if (timed.in_place)
    return [=, &ring] {
      iall_gather_produced<T, MemSpace>(
          ring, rows, cols, [](const Matrix<T, MemSpace>&) {}, c.out, dim, options, scratch)
          .wait();
    };
  return [=, &ring] { start_collective(c, ring, options, scratch).wait(); };
}

// The yardstick: a device-to-device copy of `elements` values, ready to run like a collective.
// All ranks copy at once, as they communicate at once, so they share the memory bandwidth as
// they do then.
template <class T>
std::function<void()> prepared_memcpy(std::size_t elements) {
  const auto from = huge_page_buffer<T>("memcpy_from", elements);
  const auto to = huge_page_buffer<T>("memcpy_to", elements);
  Kokkos::deep_copy(from, T(1));
  Kokkos::deep_copy(to, T(0));
  return [=] {
    Kokkos::deep_copy(to, from);
    Kokkos::fence();
  };
}

// Median and minimum over `repetitions` (after `warmups`) of the slowest rank's time (over the
// whole job: every ring times at once, as in a GEMM) for prepared_collective(...).
template <class T>
Timing time_collective(const std::string& op, const Torus& torus, Axis axis, std::size_t rows,
                       std::size_t cols, MatrixDim dim, const CommOptions& options, int warmups,
                       int repetitions, int displacement = 1) {
  return time_op(prepared_collective<T>(op, torus, axis, rows, cols, dim, options, displacement),
                 warmups, repetitions);
}

// The same for prepared_memcpy(elements).
template <class T>
Timing time_memcpy(std::size_t elements, int warmups, int repetitions) {
  return time_op(prepared_memcpy<T>(elements), warmups, repetitions);
}

}  // namespace meshslice
