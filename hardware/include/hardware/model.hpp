#pragma once
// A machine description together with the timing models built from it: what an emulating
// executor needs. Holds the chip model's GEMM-plan cache, so build one and reuse it.
#include "hardware/chip_model.hpp"
#include "hardware/ici_model.hpp"
#include "hardware/machine.hpp"

namespace meshslice::hw {

struct MachineModel {
  explicit MachineModel(Machine m) : machine(std::move(m)), chip(machine.chip), ici(machine.ici) {}
  Machine machine;
  ChipModel chip;
  IciModel ici;
};

}  // namespace meshslice::hw
