#include "comm/collective.hpp"

namespace meshslice {

double bytes_sent(CommKind kind, int chips, double shard_bytes) {
  switch (kind) {
    case CommKind::all_gather:
    case CommKind::reduce_scatter: return (chips - 1) * shard_bytes;
    case CommKind::all_reduce: return chips > 1 ? 2.0 * (chips - 1) * shard_bytes / chips : 0.0;
    case CommKind::all_to_all: return chips > 1 ? shard_bytes : 0.0;
    default: return shard_bytes;
  }
}

ScratchNeed scratch_need(CommKind kind, bool partial, int chips, std::size_t n, MatrixDim dim,
                         const CommOptions& options, bool staged, std::size_t element_bytes) {
  switch (kind) {
    case CommKind::all_gather: return all_gather_scratch(chips, n, dim, staged);
    case CommKind::reduce_scatter:
      return partial ? partial_reduce_scatter_scratch(chips, n, dim, options, staged, element_bytes)
                     : reduce_scatter_scratch(chips, n, dim, options, staged, element_bytes);
    case CommKind::all_reduce: return all_reduce_scratch(chips, n, options, staged, element_bytes);
    case CommKind::broadcast: return broadcast_scratch(n, staged);
    case CommKind::reduce: return reduce_scratch(n, options, staged, element_bytes);
    case CommKind::shift: return shift_scratch(n, staged);
    case CommKind::send:
    case CommKind::recv: return point_to_point_scratch(n, staged);
    case CommKind::all_to_all: break;
  }
  MESHSLICE_ASSERT(false, "scratch_need: no planned ", comm_kind_name(kind));
  return {};
}

}  // namespace meshslice
