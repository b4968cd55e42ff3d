#pragma once
// The bytes a rank holds for the model, by kind (the memory estimate and the step summary).
#include <cstddef>

namespace meshslice {

struct MemoryUse {
  std::size_t parameters = 0, gradients = 0, optimizer_state = 0, activations = 0, work = 0;
  // What the GEMM plans, the re-layouts and the dp averaging planned for themselves, and the
  // pipeline messages' host staging (MPI staged through host mirrors).
  std::size_t workspaces = 0;
  std::size_t total() const {
    return parameters + gradients + optimizer_state + activations + work + workspaces;
  }
};

}  // namespace meshslice
