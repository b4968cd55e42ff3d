#pragma once
// Little-endian integers in byte buffers, assembled byte by byte: Megatron's .idx/.bin files are
// little-endian whatever machine reads them, and the arrays in an .idx start at byte 34, so a
// plain cast of the mapped bytes would be both unaligned and host-order dependent.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace meshslice::data {

template <class Integer>
Integer load_little_endian(const unsigned char* bytes) {
  using Unsigned = std::make_unsigned_t<Integer>;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(Integer); ++i)
    value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  return static_cast<Integer>(static_cast<Unsigned>(value));
}

template <class Integer>
void append_little_endian(std::string& bytes, Integer value) {
  const auto bits = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Integer>>(value));
  for (std::size_t i = 0; i < sizeof(Integer); ++i)
    bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

}  // namespace meshslice::data
