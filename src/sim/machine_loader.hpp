#pragma once
// Loads a machine description for an app: a name under hardware/machines/ ("tpuv4-sim") or a path.
// A missing or malformed description is a UserError naming the problem (the apps' error policy).
#include <string>

#include "hardware/model.hpp"

namespace meshslice::sim {

// `key`: the deck key that named it, for the error message.
hw::MachineModel load_machine_model(const std::string& name_or_path, const std::string& key);

}  // namespace meshslice::sim
