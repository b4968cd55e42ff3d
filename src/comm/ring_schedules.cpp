#include "comm/ring_schedules.hpp"

#include <algorithm>
#include <climits>

#include "core/errors.hpp"

namespace meshslice {

std::vector<Chunk> equal_blocks(int parts, std::size_t n) {
  std::vector<Chunk> chunks(parts);
  for (int p = 0; p < parts; ++p) chunks[p] = {p * n, n};
  return chunks;
}

std::vector<Chunk> balanced_chunks(int parts, std::size_t n) {
  std::vector<Chunk> chunks(parts);
  const std::size_t base = n / parts;
  const std::size_t extra = n % parts;
  std::size_t offset = 0;
  for (int p = 0; p < parts; ++p) {
    const std::size_t length = base + (static_cast<std::size_t>(p) < extra ? 1 : 0);
    chunks[p] = {offset, length};
    offset += length;
  }
  return chunks;
}

int mpi_count(std::size_t n) {
  require(n <= static_cast<std::size_t>(INT_MAX), "a message of ", n,
          " elements exceeds MPI's int count limit (", INT_MAX,
          "); use more ranks or more slices so that each message is smaller");
  return static_cast<int>(n - std::min(n, injected_shortfall()));
}

}  // namespace meshslice
