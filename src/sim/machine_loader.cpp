#include "sim/machine_loader.hpp"

#include "core/errors.hpp"
#include "hardware/machine.hpp"

namespace meshslice::sim {

hw::MachineModel load_machine_model(const std::string& name_or_path, const std::string& key) {
  try {
    return hw::MachineModel(hw::load_machine(hw::machine_path(name_or_path)));
  } catch (const hw::MachineError& e) {
    throw UserError(key + " = " + name_or_path + ": " + e.what());
  }
}

}  // namespace meshslice::sim
