#include "data/indexed_dataset_format.hpp"

namespace meshslice::data {

int token_type_bytes(std::uint8_t code) {
  switch (code) {
    case static_cast<std::uint8_t>(TokenType::uint8):
    case static_cast<std::uint8_t>(TokenType::int8): return 1;
    case static_cast<std::uint8_t>(TokenType::int16):
    case static_cast<std::uint8_t>(TokenType::uint16): return 2;
    case static_cast<std::uint8_t>(TokenType::int32): return 4;
    case static_cast<std::uint8_t>(TokenType::int64): return 8;
    default: return 0;
  }
}

std::string token_type_name(std::uint8_t code) {
  static const char* const names[] = {"unknown", "uint8",   "int8",    "int16", "int32",
                                      "int64",   "float64", "float32", "uint16"};
  return code < sizeof(names) / sizeof(names[0]) ? names[code] : names[0];
}

TokenType token_type_for(std::int64_t vocabulary) {
  return vocabulary <= 65536 ? TokenType::uint16 : TokenType::int32;
}

}  // namespace meshslice::data
