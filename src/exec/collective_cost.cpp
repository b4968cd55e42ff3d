#include "exec/collective_cost.hpp"

namespace meshslice {

hw::CommCost collective_cost(const hw::IciModel& ici, hw::Ring ring, CommKind kind, int chips,
                             double shard_bytes, int displacement) {
  switch (kind) {
    case CommKind::all_gather: return ici.all_gather(ring, chips, shard_bytes);
    case CommKind::reduce_scatter: return ici.reduce_scatter(ring, chips, shard_bytes);
    case CommKind::all_reduce: return ici.all_reduce(ring, chips, shard_bytes);
    case CommKind::broadcast: return ici.broadcast(ring, chips, shard_bytes);
    case CommKind::reduce: return ici.reduce(ring, chips, shard_bytes);
    case CommKind::shift: return ici.shift(ring, chips, displacement, shard_bytes);
    case CommKind::send:
    case CommKind::recv: return ici.send_recv(ring, shard_bytes);
    case CommKind::all_to_all: return ici.all_to_all(ring, chips, shard_bytes);
  }
  return {};
}

}  // namespace meshslice
