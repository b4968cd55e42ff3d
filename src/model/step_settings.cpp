#include "model/step_settings.hpp"

#include "core/errors.hpp"

namespace meshslice {

ModelShape StepSettings::micro_batch_shape(const ModelShape& shape) const {
  ModelShape s = shape;
  s.sequences = shape.sequences / micro_batches;
  return s;
}

void check_step_settings(const StepSettings& step, const ModelShape& shape, const MeshShape& mesh) {
  const std::size_t m = step.micro_batches, v = step.virtual_stages;
  const std::size_t p = static_cast<std::size_t>(mesh.pp);
  const std::size_t rows = static_cast<std::size_t>(mesh.rows);
  require(m >= 1, "pipeline.microbatches = ", m, " must be at least 1");
  require(shape.sequences % m == 0, "model.sequences = ", shape.sequences,
          " (the batch of a "
          "replica) does not divide into pipeline.microbatches = ",
          m,
          " micro-batches; choose "
          "a divisor of ",
          shape.sequences);
  // (With one micro-batch the model's own check says it in the model's terms.)
  require(m == 1 || (shape.sequences / m) % rows == 0, "a micro-batch of ", shape.sequences / m,
          " sequences (model.sequences / pipeline.microbatches) does not divide over the ", rows,
          " mesh rows; choose model.sequences divisible by ", m * rows);
  require(v >= 1, "pipeline.virtual_stages = ", v, " must be at least 1");
  if (step.schedule == PipelineSchedule::interleaved) {
    require(p >= 2,
            "the interleaved schedule needs pipeline stages (mesh.pp >= 2), this run has "
            "mesh.pp = ",
            p, "; use pipeline.schedule = 1f1b");
    require(v >= 2,
            "the interleaved schedule needs pipeline.virtual_stages >= 2 (model chunks "
            "per rank), got ",
            v, "; with 1 use pipeline.schedule = 1f1b");
    require(m % p == 0, "the interleaved schedule runs micro-batches in groups of the ", p,
            " stages: pipeline.microbatches = ", m, " must be a multiple of ", p);
  } else {
    require(v == 1, "pipeline.virtual_stages = ", v,
            " needs pipeline.schedule = interleaved "
            "(",
            schedule_name(step.schedule), " runs one model chunk per rank)");
  }
  require(p * v <= shape.blocks, "mesh.pp = ", p, " stages x pipeline.virtual_stages = ", v,
          " need ", p * v, " blocks (one per virtual stage) but model.blocks = ", shape.blocks,
          "; use fewer stages or more blocks");
  // Each stage-to-stage message has its own channel: (virtual stage, direction, micro-batch).
  require(2 * p * v * m <= static_cast<std::size_t>(AxisComm::kPointToPointChannels),
          "pipeline: ", p, " stages x ", v, " virtual stages x ", m, " micro-batches need ",
          2 * p * v * m, " message channels, more than the ", AxisComm::kPointToPointChannels,
          " MPI tags allow; use fewer micro-batches");
  for (const std::size_t b : step.checkpointed)
    require(b < shape.blocks, "recompute.blocks names block ", b,
            " but the model has blocks "
            "0 to ",
            shape.blocks - 1);
}

StageSplit pipeline_split(const StepSettings& step, const ModelShape& shape,
                          const MeshShape& mesh) {
  const double chips = static_cast<double>(mesh.rows) * mesh.cols;
  const std::vector<double> blocks(shape.blocks, block_flops(shape) / chips / step.flop_rate);
  // The loss reads the output and target and writes its gradient: 3 T H elements, counted as
  // FLOPs (a tie-breaker between equally slow splits more than a cost).
  const double loss = 3.0 * shape.tokens() * shape.hidden / chips / step.flop_rate;
  return balanced_split(blocks, static_cast<std::size_t>(mesh.pp) * step.virtual_stages, loss);
}

}  // namespace meshslice
