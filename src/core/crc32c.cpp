// CRC-32C (see core/crc32c.hpp).
#include "core/crc32c.hpp"

#include <array>

namespace meshslice {

namespace {

// Castagnoli's polynomial without its x^32 term, in reflected order.
constexpr std::uint32_t kPolynomial = 0x82F63B78u;

// The register after feeding one byte v into a zero register.
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t v = 0; v < 256; ++v) {
    std::uint32_t reg = v;
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ ((reg & 1u) ? kPolynomial : 0u);
    table[v] = reg;
  }
  return table;
}

// Built by the compiler: no initialization at run time, nothing for threads to race on.
constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

std::uint32_t crc32c_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t reg = ~crc;  // undo the final xor of the CRC so far
  for (; bytes > 0; --bytes, ++p) reg = (reg >> 8) ^ kTable[(reg ^ *p) & 0xFFu];
  return ~reg;
}

std::uint32_t crc32c_masked(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace meshslice
