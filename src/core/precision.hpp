#pragma once
// train.precision's names, and the width of the elements a run of each multiplies: what the
// emulator and the tuner time a run's GEMM operands and messages at.
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace meshslice {

inline const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names{"float", "double", "bf16", "tf32"};
  return names;
}

// Bytes of one GEMM operand of a run at `precision`: bf16 2, float and tf32 4 (TF32 is float
// cut on the tensor cores: it is stored and moved as float), double 8.
inline int precision_element_bytes(const std::string& precision) {
  if (precision == "bf16") return 2;
  if (precision == "float" || precision == "tf32") return 4;
  require(precision == "double", "unknown precision '", precision,
          "' (float, double, bf16 or tf32)");
  return 8;
}

}  // namespace meshslice
