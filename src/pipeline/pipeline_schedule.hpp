#pragma once
// Pipeline-parallel schedules (SageMaker model parallelism paper, Megatron-LM): the order in
// which one pipeline stage runs the forward and backward passes of a step's micro-batches.
//
//   gpipe        every forward, then every backward (in reverse, the last micro-batch first):
//                simple, but a stage holds all m micro-batches' activations at once
//   1f1b         after p - s - 1 warm-up forwards, stage s alternates one forward and one
//                backward, then drains: the same bubble as GPipe, at most p - s activations held
//   interleaved  1F1B over v model chunks per rank (virtual stages c * p + s): a smaller bubble
//                for more point-to-point traffic; m must be a multiple of p
//
//     for (const PipelineSlot& slot : pipeline_order(PipelineSchedule::one_f_one_b, p, s, m))
//       slot.forward ? run_forward(slot.micro_batch, slot.chunk) : run_backward(...);
//
// Pure functions of (schedule, p, s, m, v): every rank derives its own order, and the tests check
// them without MPI.
#include <cstddef>
#include <string>
#include <vector>

namespace meshslice {

enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
const char* schedule_name(PipelineSchedule schedule);      // "gpipe", "1f1b", "interleaved"
PipelineSchedule parse_schedule(const std::string& name);  // UserError listing the names

struct PipelineSlot {
  bool forward = true;
  std::size_t micro_batch = 0;
  std::size_t chunk =
      0;  // this rank's model chunk (virtual stage chunk * p + s); 0 unless interleaved
  bool operator==(const PipelineSlot& o) const {
    return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk;
  }
};

// The order of stage `stage` of `stages` for `micro_batches` micro-batches and, interleaved,
// `chunks` model chunks per rank. UserError when the schedule cannot run them (no stages or
// micro-batches; interleaved with micro-batches not a multiple of the stages, or one chunk).
std::vector<PipelineSlot> pipeline_order(PipelineSchedule schedule, std::size_t stages,
                                         std::size_t stage, std::size_t micro_batches,
                                         std::size_t chunks = 1);

// The most micro-batch activations an order holds at once (forwards whose backward has not run),
// over every chunk, or of one chunk.
std::size_t peak_activations(const std::vector<PipelineSlot>& order);
std::size_t peak_activations(const std::vector<PipelineSlot>& order, std::size_t chunk);

}  // namespace meshslice
