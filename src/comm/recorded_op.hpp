#pragma once
// How the collectives describe an operation to the flight recorder (core/flight_recorder.hpp).
#include <cstddef>

#include "core/flight_recorder.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// A collective on `ring` moving `elements` of `element_bytes` from this rank. Draws the ring's
// next operation number, so it is called once per collective, in the order the ring's ranks
// agree on. A point-to-point message (a send or receive between pipeline stages) draws none:
// neighbouring ranks exchange different sequences of them.
inline CommOpInfo ring_op(CommKind kind, const AxisComm& ring, std::size_t elements,
                          std::size_t element_bytes, int peer_ring_rank = -1) {
  CommOpInfo op;
  op.kind = kind;
  op.axis = ring.name().c_str();
  op.group_first = ring.group_first();
  const bool point_to_point = kind == CommKind::send || kind == CommKind::recv;
  op.group_op = point_to_point ? 0 : ring.next_op();
  op.bytes = elements * element_bytes;
  op.element_bytes = element_bytes;
  op.peer = peer_ring_rank >= 0 ? ring.world_rank_of(peer_ring_rank) : -1;
  return op;
}

}  // namespace meshslice
