#pragma once
// How a training step runs beyond tensor parallelism: the pipeline schedule over the pp axis,
// the micro-batches the step's batch is cut into (their gradients accumulate), the model chunks
// per rank of the interleaved schedule, and the blocks whose activations are recomputed in the
// backward pass instead of kept (activation checkpointing), and ZeRO-1 (the optimizer state
// sharded over dp).
#include <cstddef>
#include <set>

#include "mesh/torus.hpp"
#include "model/model_config.hpp"
#include "pipeline/pipeline_schedule.hpp"
#include "pipeline/stage_split.hpp"

namespace meshslice {

struct StepSettings {
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  std::size_t micro_batches = 1;
  std::size_t virtual_stages = 1;      // model chunks per rank (interleaved only)
  std::set<std::size_t> checkpointed;  // block indices
  bool zero = false;                   // ZeRO-1
  // The GEMM rate of one chip the stage split's time estimate assumes (meshslice-train measures
  // it); the split itself depends only on the blocks' relative costs.
  double flop_rate = 1e10;
  // The shape one micro-batch runs at: the replica's sequences split m ways.
  ModelShape micro_batch_shape(const ModelShape& shape) const;
};

// UserError (naming the deck key and the fix) when the step cannot run `shape` on `mesh`: a
// batch that does not divide into micro-batches (or whose micro-batches do not divide over the
// mesh rows), more stages x virtual stages than blocks, an interleaved schedule without the
// micro-batches, stages or chunks it needs, virtual stages without the interleaved schedule, a
// checkpointed block that does not exist.
void check_step_settings(const StepSettings& step, const ModelShape& shape, const MeshShape& mesh);

// The blocks over mesh.pp x virtual_stages virtual stages (virtual stage c * pp + s is chunk c of
// stage s), balanced on each block's estimated time per step: its GEMM FLOPs on one chip of the
// stage's mesh at step.flop_rate, the last virtual stage also computing the loss.
StageSplit pipeline_split(const StepSettings& step, const ModelShape& shape, const MeshShape& mesh);

}  // namespace meshslice
