#pragma once
// The kinds of communication a rank takes part in, named once: the flight recorder logs them,
// and comm/collective.hpp describes a collective by one of them.
#include <cstdint>
#include <string>

namespace meshslice {

enum class CommKind : std::uint8_t {
  all_gather,
  reduce_scatter,
  all_reduce,
  broadcast,
  reduce,
  shift,
  send,
  recv,
  all_to_all,
};

const char* comm_kind_name(CommKind kind);  // "all_gather", ..., as the enumerators are spelt
// "partial_all_gather", "partial_reduce_scatter": a sliced collective's name (kind's otherwise).
const char* partial_comm_kind_name(CommKind kind);
// The kind `name` names; a UserError listing the names otherwise. `what` says where it was read.
CommKind parse_comm_kind(const std::string& name, const std::string& what);

}  // namespace meshslice
