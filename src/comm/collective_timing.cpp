#include "comm/collective_timing.hpp"

#include <algorithm>

namespace meshslice {

const std::vector<std::string>& timed_collectives() {
  static const std::vector<std::string> ops = {
      "all_gather", "all_gather_in_place", "reduce_scatter", "all_reduce", "broadcast", "reduce",
      "shift"};
  return ops;
}

std::pair<std::size_t, std::size_t> shard_shape(std::size_t bytes, std::size_t element) {
  const std::size_t elements = std::max<std::size_t>(1, bytes / element);
  const std::size_t cols = elements % 1024 == 0 ? 1024 : elements;
  return {elements / cols, cols};
}

TimedCollective timed_collective(const std::string& op) {
  if (op == "all_gather_in_place") return {CommKind::all_gather, true};
  return {parse_comm_kind(op, "timed collective"), false};
}

}  // namespace meshslice
