#include "core/comm_kind.hpp"

#include <iterator>

#include "core/errors.hpp"

namespace meshslice {

namespace {
constexpr const char* kKindNames[] = {"all_gather", "reduce_scatter", "all_reduce",
                                      "broadcast",  "reduce",         "shift",
                                      "send",       "recv",           "all_to_all"};
}  // namespace

const char* comm_kind_name(CommKind kind) { return kKindNames[static_cast<int>(kind)]; }

const char* partial_comm_kind_name(CommKind kind) {
  if (kind == CommKind::all_gather) return "partial_all_gather";
  if (kind == CommKind::reduce_scatter) return "partial_reduce_scatter";
  return comm_kind_name(kind);
}

CommKind parse_comm_kind(const std::string& name, const std::string& what) {
  std::string known;
  for (std::size_t i = 0; i < std::size(kKindNames); ++i) {
    if (name == kKindNames[i]) return static_cast<CommKind>(i);
    known += std::string(i ? ", " : "") + kKindNames[i];
  }
  throw UserError(concat(what, ": '", name, "' is not a communication kind (", known, ")"));
}

}  // namespace meshslice
