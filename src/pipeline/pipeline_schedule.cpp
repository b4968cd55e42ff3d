#include "pipeline/pipeline_schedule.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace meshslice {

namespace {

// Interleaved 1F1B's k-th forward (or backward) micro-step of a rank: micro-batches go in groups
// of p through chunk 0, then the same group through chunk 1, ...; backwards walk the chunks from
// the last one down (Megatron-LM's get_model_chunk_id).
PipelineSlot interleaved_step(std::size_t k, bool forward, std::size_t stages, std::size_t chunks) {
  const std::size_t group = k / (stages * chunks), in_group = k % (stages * chunks);
  const std::size_t chunk = in_group / stages;
  return {forward, group * stages + in_group % stages, forward ? chunk : chunks - 1 - chunk};
}

// 1F1B over `total` micro-steps of which the first `warmup` are forwards only: then one forward
// and one backward alternate, and the last backwards drain.
template <class Step>
std::vector<PipelineSlot> one_forward_one_backward(std::size_t total, std::size_t warmup,
                                                   Step step) {
  std::vector<PipelineSlot> order;
  for (std::size_t k = 0; k < warmup; ++k) order.push_back(step(k, true));
  for (std::size_t k = 0; k + warmup < total; ++k) {
    order.push_back(step(k + warmup, true));
    order.push_back(step(k, false));
  }
  for (std::size_t k = total - warmup; k < total; ++k) order.push_back(step(k, false));
  return order;
}

}  // namespace

const char* schedule_name(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved";
  }
  return "?";
}

PipelineSchedule parse_schedule(const std::string& name) {
  for (PipelineSchedule s :
       {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved})
    if (name == schedule_name(s)) return s;
  throw UserError(
      concat("unknown pipeline schedule '", name, "'; valid: gpipe, 1f1b, interleaved"));
}

std::vector<PipelineSlot> pipeline_order(PipelineSchedule schedule, std::size_t stages,
                                         std::size_t stage, std::size_t micro_batches,
                                         std::size_t chunks) {
  require(stages >= 1 && stage < stages, "pipeline stage ", stage, " of ", stages,
          " does not exist");
  require(micro_batches >= 1, "a pipeline step needs at least one micro-batch");
  if (schedule == PipelineSchedule::gpipe) {
    std::vector<PipelineSlot> order;
    for (std::size_t m = 0; m < micro_batches; ++m) order.push_back({true, m, 0});
    for (std::size_t m = micro_batches; m-- > 0;) order.push_back({false, m, 0});
    return order;
  }
  if (schedule == PipelineSchedule::one_f_one_b)
    return one_forward_one_backward(micro_batches, std::min(stages - stage - 1, micro_batches),
                                    [](std::size_t k, bool forward) {
                                      return PipelineSlot{forward, k, 0};
                                    });
  require(chunks >= 2,
          "the interleaved schedule needs at least 2 model chunks per rank "
          "(pipeline.virtual_stages), got ",
          chunks, "; with 1 use 1f1b");
  require(micro_batches % stages == 0,
          "the interleaved schedule runs micro-batches in groups of "
          "the ",
          stages, " stages, but ", micro_batches, " micro-batches are not a multiple of ", stages);
  const std::size_t total = micro_batches * chunks;
  // Megatron-LM's warm-up: enough forwards for the last virtual stage's first backward to find
  // its input; with as many micro-batches as stages, every forward runs first.
  std::size_t warmup = (stages - stage - 1) * 2 + (chunks - 1) * stages;
  if (micro_batches == stages) warmup = total;
  return one_forward_one_backward(total, std::min(warmup, total), [&](std::size_t k, bool forward) {
    return interleaved_step(k, forward, stages, chunks);
  });
}

namespace {

template <class Counts>
std::size_t peak_held(const std::vector<PipelineSlot>& order, Counts counts) {
  std::size_t held = 0, peak = 0;
  for (const PipelineSlot& slot : order) {
    if (!counts(slot)) continue;
    held = slot.forward ? held + 1 : held - 1;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace

std::size_t peak_activations(const std::vector<PipelineSlot>& order) {
  return peak_held(order, [](const PipelineSlot&) { return true; });
}

std::size_t peak_activations(const std::vector<PipelineSlot>& order, std::size_t chunk) {
  return peak_held(order, [chunk](const PipelineSlot& slot) { return slot.chunk == chunk; });
}

}  // namespace meshslice
