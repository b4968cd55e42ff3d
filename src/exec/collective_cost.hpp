#pragma once
// What a collective costs on the interconnect model (hardware/ici_model.hpp), by its kind: the
// emulating executor times its collectives with it, the tuner's calibration fits links against
// it. `shard_bytes` is the collective's shard_elements() in bytes (comm/collective.hpp);
// `displacement` matters to a shift only.
#include "core/comm_kind.hpp"
#include "hardware/ici_model.hpp"

namespace meshslice {

hw::CommCost collective_cost(const hw::IciModel& ici, hw::Ring ring, CommKind kind, int chips,
                             double shard_bytes, int displacement = 1);

}  // namespace meshslice
