#include "sim/machine_loader.hpp"

#include <algorithm>

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

hw::MachineModel at_element_bytes(const hw::MachineModel& machine, int element_bytes) {
  hw::Machine m = machine.machine;
  m.chip.element_bytes = element_bytes;
  m.chip.accumulator_bytes = std::max(m.chip.accumulator_bytes, element_bytes);
  return hw::MachineModel(std::move(m));
}

}  // namespace meshslice::sim
