#pragma once
// The rest of a transformer block's step beyond its FC layers, for end-to-end times (MeshSlice
// paper §5.1.1: "if we also include the performance of the non-FC layers of the LLM models"):
// attention's q k^T and p v products on the matrix units, softmax, RMSNorms, residual adds and
// GeLU through the chip's HBM, the very work meshslice-train's kernels report
// (block/block_work.hpp), timed on the emulated chip (SimExecutor::local_work).
//
// The layout is meshslice-train's standard one: whole sequences over the mesh rows, whole heads
// over the columns, so attention needs no communication and every chip does 1/chips of the
// work. That work does not depend on the GEMM algorithm: the sweep adds the same time to every
// algorithm's FC time.
#include <cstddef>
#include <string>

#include "hardware/model.hpp"
#include "sim/fc_layers.hpp"

namespace meshslice::sim {

struct NonFcTime {
  double seconds = 0;   // one chip's forward plus backward
  double flops = 0;     // of attention's products, on one chip
  std::string why_not;  // why the block does not split over the mesh ("" when it does)
  bool valid() const { return why_not.empty(); }
};

// One chip's non-FC work of a block's training step, `tokens` tokens in sequences of
// `sequence`, on a rows x cols mesh of `machine`'s chips.
NonFcTime non_fc_time(const hw::MachineModel& machine, const LlmSpec& llm, std::size_t tokens,
                      std::size_t sequence, int rows, int cols);

}  // namespace meshslice::sim
