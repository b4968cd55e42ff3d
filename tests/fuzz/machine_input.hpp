#pragma once
// One fuzz input through the machine-description reader, as sim::load_machine_model uses it:
// parse the text (hardware/src/kv_yaml.cpp, machine.cpp) and build the timing models from it.
// Shared by the libFuzzer target (fuzz_machine.cpp) and the regression test
// (test_fuzz_regressions.cpp), so that a kept input replays exactly what the fuzzer ran.
//
// Expected outcomes: returns, or throws hw::MachineError. Anything else escaping (another
// exception type, a crash, a sanitizer report) is a finding.
#include <string>

#include "hardware/machine.hpp"
#include "hardware/model.hpp"

namespace meshslice::fuzz {

inline void run_machine_input(const std::string& data) {
  const hw::MachineModel model(hw::parse_machine(data, "fuzz.yaml"));
  (void)model;
}

}  // namespace meshslice::fuzz
