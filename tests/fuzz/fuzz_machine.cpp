// libFuzzer target: the machine-description reader (machine_input.hpp). A MachineError is the
// expected answer to bad input; any other exception escapes on purpose, so libFuzzer reports it
// (as a deadly signal) with the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "machine_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    meshslice::fuzz::run_machine_input(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const meshslice::hw::MachineError&) {
  }
  return 0;
}
