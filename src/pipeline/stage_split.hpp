#pragma once
// The pipeline's partition of the blocks into stages: consecutive blocks per (virtual) stage,
// chosen to minimise the slowest stage's estimated time (SageMaker model parallelism's automatic
// partition, for a chain of layers). Every stage gets at least one block.
//
//     const StageSplit split = balanced_split(block_seconds, stages, loss_seconds);
//     split.first[s] .. split.first[s + 1] - 1   are stage s's blocks
#include <cstddef>
#include <string>
#include <vector>

namespace meshslice {

struct StageSplit {
  std::vector<std::size_t> first;  // stages + 1 boundaries: stage s holds [first[s], first[s + 1])
  std::vector<double> seconds;     // each stage's estimated time
  double slowest() const;
  double mean() const;
  std::size_t blocks(std::size_t stage) const { return first[stage + 1] - first[stage]; }
  // "blocks 0-3 | 4-7 (est. 1.2 | 1.2 ms)", for the log.
  std::string str() const;
};

// The split of blocks with estimated times `block_seconds` over `stages` stages, the last one
// also running the loss (`last_stage_extra` seconds), that minimises the slowest stage; among
// equally slow splits, the one that gives later stages fewer blocks (the last one computes the
// loss). UserError when there are more stages than blocks.
StageSplit balanced_split(const std::vector<double>& block_seconds, std::size_t stages,
                          double last_stage_extra = 0);

}  // namespace meshslice
