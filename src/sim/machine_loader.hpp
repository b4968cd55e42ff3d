#pragma once
// Loads a machine description for an app: a name under hardware/machines/ ("tpuv4-sim") or a path.
// A missing or malformed description is a UserError naming the problem (the apps' error policy).
#include <string>

#include "hardware/model.hpp"

namespace meshslice::sim {

// `key`: the deck key that named it, for the error message.
hw::MachineModel load_machine_model(const std::string& name_or_path, const std::string& key);

// `machine` multiplying and moving `element_bytes`-wide elements in place of its description's
// own (the TPUv4 files say 2, bf16): how a run at another precision is timed on it. Its
// accumulators stay at least as wide as the elements.
hw::MachineModel at_element_bytes(const hw::MachineModel& machine, int element_bytes);

}  // namespace meshslice::sim
