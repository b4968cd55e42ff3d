// libFuzzer target: deck parsing, --set handling, validation and the resolved-deck round trip
// (deck_input.hpp says what an input is). A UserError is the expected answer to bad input; any
// other exception escapes on purpose, so libFuzzer reports it (as a deadly signal) with the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "deck_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    meshslice::fuzz::run_deck_input(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const meshslice::UserError&) {
  }
  return 0;
}
