#include "comm/collective_timing.hpp"

#include <algorithm>
#include <stdexcept>

namespace meshslice {

const std::vector<std::string>& timed_collectives() {
  static const std::vector<std::string> ops = {
      "all_gather", "all_gather_in_place", "reduce_scatter", "all_reduce",
      "broadcast",  "reduce",              "shift"};
  return ops;
}

std::pair<std::size_t, std::size_t> shard_shape(std::size_t bytes, std::size_t element) {
  const std::size_t elements = std::max<std::size_t>(1, bytes / element);
  const std::size_t cols = elements % 1024 == 0 ? 1024 : elements;
  return {elements / cols, cols};
}

ScratchNeed collective_scratch_need(const std::string& op, int p, std::size_t n, MatrixDim dim,
                                    const CommOptions& options, std::size_t element_bytes) {
  const bool staged = mpi_staged<MemSpace>(options);
  if (op == "all_gather" || op == "all_gather_in_place")
    return all_gather_scratch(p, n, dim, staged);
  if (op == "reduce_scatter")
    return reduce_scatter_scratch(p, n, dim, options, staged, element_bytes);
  if (op == "all_reduce") return all_reduce_scratch(p, n, options, staged, element_bytes);
  if (op == "broadcast") return broadcast_scratch(n, staged);
  if (op == "reduce") return reduce_scratch(n, options, staged, element_bytes);
  if (op == "shift") return shift_scratch(n, staged);
  throw std::logic_error("collective_scratch_need: unknown operation " + op);
}

}  // namespace meshslice
