#pragma once
// A collective described once: its kind, the mesh axis whose ring runs it, and its buffers and
// how they are cut. Starting it (start_collective below, and every executor's start()), timing it
// (comm/collective_timing.hpp), costing it on the interconnect model (exec/collective_cost.hpp)
// and sizing its scratch and traffic all read this description, so a new collective is a kind in
// core/comm_kind.hpp and a case in each of those switches, nothing more.
#include <cstddef>
#include <optional>
#include <type_traits>

#include "comm/collectives.hpp"
#include "comm/comm_options.hpp"
#include "comm/comm_scratch.hpp"
#include "comm/partial_collectives.hpp"
#include "comm/slicing.hpp"
#include "core/comm_kind.hpp"
#include "core/errors.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// Shapes and meanings as in comm/collectives.hpp and comm/partial_collectives.hpp.
template <class Mat>
struct Collective {
  CommKind kind = CommKind::all_gather;
  Axis axis = Axis::row;
  // What this chip gives: all_gather's shard (partial: the shard its sub-shard is cut from),
  // reduce_scatter's stack (partial: the sub-shard's stack), the buffer of broadcast, send, recv.
  Mat in;
  // What it gets: the gathered stack, the reduced shard (partial: the shard whose slice it
  // writes), the sum of all_reduce and reduce; the buffer again for broadcast, send and recv.
  Mat out;
  MatrixDim dim = MatrixDim::rows;  // all_gather, reduce_scatter: the dimension shards stack along
  std::optional<SliceSpec> slice;   // partial all_gather, reduce_scatter: the sub-shard moved
  double beta = 0;  // partial reduce_scatter: out's slice = the reduced sum + beta * out's slice
  int peer = 0;     // broadcast, reduce: the root; shift, send, recv: the displacement
  int channel = 0;  // send, recv: messages on one channel between two ranks match in order

  // Elements of the piece the ring moves per rank: all_gather's (sub-)shard, reduce_scatter's
  // reduced (sub-)shard, the whole buffer otherwise.
  std::size_t shard_elements() const {
    const Mat& m = kind == CommKind::reduce_scatter ? out : in;
    return m.extent(0) * m.extent(1) / (slice ? slice->count : 1);
  }
  const char* name() const { return slice ? partial_comm_kind_name(kind) : comm_kind_name(kind); }

  // The same collective on other buffers (a combined executor's two sides).
  template <class F>
  auto on(F&& buffer) const -> Collective<std::decay_t<decltype(buffer(in))>> {
    return {kind, axis, buffer(in), buffer(out), dim, slice, beta, peer, channel};
  }
};

// Bytes one rank sends over its ring of `chips` for a collective whose shard_elements() take
// `shard_bytes`: the traffic a trace records and a bandwidth is quoted on (as nccl-tests' bus
// bandwidth): P-1 shards for all_gather and reduce_scatter, 2 (P-1)/P buffers for all_reduce,
// all of them but its own for all_to_all, the buffer otherwise.
double bytes_sent(CommKind kind, int chips, double shard_bytes);

// The scratch the collective carves (comm/comm_scratch.hpp), on a ring of `chips`.
ScratchNeed scratch_need(CommKind kind, bool partial, int chips, std::size_t shard_elements,
                         MatrixDim dim, const CommOptions& options, bool staged,
                         std::size_t element_bytes);
template <class Mat>
ScratchNeed scratch_need(const Collective<Mat>& c, int chips, const CommOptions& options,
                         bool staged, std::size_t element_bytes) {
  return scratch_need(c.kind, c.slice.has_value(), chips, c.shard_elements(), c.dim, options,
                      staged, element_bytes);
}

// Starts `c` on `ring` (the ring of c.axis) over MPI.
template <class T, class Space>
Request start_collective(const Collective<Matrix<T, Space>>& c, const AxisComm& ring,
                         const CommOptions& options, const CommScratch<T, Space>& scratch) {
  switch (c.kind) {
    case CommKind::all_gather:
      return c.slice ? ipartial_all_gather(ring, c.in, c.out, c.dim, *c.slice, options, scratch)
                     : iall_gather(ring, c.in, c.out, c.dim, options, scratch);
    case CommKind::reduce_scatter:
      return c.slice ? ipartial_reduce_scatter(ring, c.in, c.out, c.dim, *c.slice, options, c.beta,
                                               scratch)
                     : ireduce_scatter(ring, c.in, c.out, c.dim, options, scratch);
    case CommKind::all_reduce: return iall_reduce(ring, c.in, c.out, options, scratch);
    case CommKind::broadcast: return ibroadcast(ring, c.in, c.peer, options, scratch);
    case CommKind::reduce: return ireduce(ring, c.in, c.out, c.peer, options, scratch);
    case CommKind::shift: return ishift(ring, c.in, c.out, c.peer, options, scratch);
    case CommKind::send: return isend(ring, c.in, c.peer, c.channel, options, scratch);
    case CommKind::recv: return irecv(ring, c.in, c.peer, c.channel, options, scratch);
    case CommKind::all_to_all: break;  // the caller's own exchange (comm/block_transpose.hpp)
  }
  MESHSLICE_ASSERT(false, "start_collective: no non-blocking ", comm_kind_name(c.kind));
  return {};
}

}  // namespace meshslice
