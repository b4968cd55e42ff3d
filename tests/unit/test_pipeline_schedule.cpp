// The pipeline schedules without MPI: each stage's order against GPipe, 1F1B and interleaved 1F1B
// as published, the activations each holds at most, and a whole pipeline run slot by slot: every
// stage's order must let the others progress (a forward needs the previous virtual stage's output
// of its micro-batch, a backward the next one's gradient), or the pipeline would deadlock.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/errors.hpp"
#include "pipeline/pipeline_schedule.hpp"
#include "test_support.hpp"

namespace meshslice {
namespace {

using test::expect_contains;
using test::user_error_of;

// "F0 F1 B0 ..." (interleaved: "F0.1" is micro-batch 0 of chunk 1).
std::string text(const std::vector<PipelineSlot>& order, bool chunks = false) {
  std::string out;
  for (const PipelineSlot& s : order) {
    out += (out.empty() ? "" : " ") + std::string(s.forward ? "F" : "B") +
           std::to_string(s.micro_batch) + (chunks ? "." + std::to_string(s.chunk) : "");
  }
  return out;
}

TEST(PipelineSchedule, GpipeRunsEveryForwardThenEveryBackward) {
  for (std::size_t stage = 0; stage < 3; ++stage) {
    const auto order = pipeline_order(PipelineSchedule::gpipe, 3, stage, 4);
    EXPECT_EQ(text(order), "F0 F1 F2 F3 B3 B2 B1 B0");
    EXPECT_EQ(peak_activations(order), 4u);
  }
}

TEST(PipelineSchedule, OneForwardOneBackwardWarmsUpByTheStagesBelow) {
  // p = 4, m = 8 (the PipeDream-flush / Megatron-LM order).
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::one_f_one_b, 4, 0, 8)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::one_f_one_b, 4, 2, 8)),
            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::one_f_one_b, 4, 3, 8)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  // Fewer micro-batches than stages: the warm-up is cut to what there is.
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::one_f_one_b, 4, 0, 2)), "F0 F1 B0 B1");
  for (std::size_t stage = 0; stage < 4; ++stage)
    EXPECT_EQ(peak_activations(pipeline_order(PipelineSchedule::one_f_one_b, 4, stage, 8)),
              4 - stage);
}

TEST(PipelineSchedule, InterleavedWalksChunksInGroupsOfTheStages) {
  // p = 2, v = 2, m = 4: forwards take micro-batches 0-1 through chunk 0, then chunk 1, then
  // micro-batches 2-3; backwards start at the last chunk. Stage 0 warms up 2 + 2 = 4 forwards,
  // stage 1 only (v - 1) p = 2.
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::interleaved, 2, 0, 4, 2), true),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::interleaved, 2, 1, 4, 2), true),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0");
  // As many micro-batches as stages: every forward first.
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::interleaved, 2, 1, 2, 2), true),
            "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0");
}

// Runs p stages' orders together, one slot per stage per tick when its inputs are there.
// Returns the ticks taken, or 0 when the pipeline deadlocks.
std::size_t run_pipeline(PipelineSchedule schedule, std::size_t p, std::size_t m, std::size_t v) {
  std::vector<std::vector<PipelineSlot>> orders;
  for (std::size_t s = 0; s < p; ++s) orders.push_back(pipeline_order(schedule, p, s, m, v));
  const std::size_t virtual_stages = p * v;
  // done[(forward, micro-batch, virtual stage)]: the tick it finished.
  std::map<std::tuple<bool, std::size_t, std::size_t>, std::size_t> done;
  std::vector<std::size_t> next(p, 0);
  for (std::size_t tick = 1; tick < 100000; ++tick) {
    bool all_done = true, progressed = false;
    std::vector<std::tuple<bool, std::size_t, std::size_t>> finished;  // visible next tick
    for (std::size_t s = 0; s < p; ++s) {
      if (next[s] == orders[s].size()) continue;
      all_done = false;
      const PipelineSlot& slot = orders[s][next[s]];
      const std::size_t stage = slot.chunk * p + s;
      const auto ready = [&](bool forward, std::size_t j) {
        const auto it = done.find({forward, slot.micro_batch, j});
        return it != done.end() && it->second < tick;
      };
      const bool inputs = slot.forward ? (stage == 0 || ready(true, stage - 1))
                                       : ready(true, stage) && (stage + 1 == virtual_stages ||
                                                                ready(false, stage + 1));
      if (!inputs) continue;
      finished.emplace_back(slot.forward, slot.micro_batch, stage);
      ++next[s];
      progressed = true;
    }
    for (const auto& key : finished) done[key] = tick;
    if (all_done) return tick - 1;
    if (!progressed) return 0;  // every unfinished stage waits for another: a deadlock
  }
  return 0;
}

TEST(PipelineSchedule, EveryScheduleRunsEveryPassOnceWithoutDeadlock) {
  for (std::size_t p : {1, 2, 3, 4})
    for (std::size_t m : {1, 2, 4, 8}) {
      for (PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
        const std::size_t ticks = run_pipeline(schedule, p, m, 1);
        EXPECT_GT(ticks, 0u) << schedule_name(schedule) << " p=" << p << " m=" << m;
        // Both take the ideal 2 (m + p - 1) ticks: forward and backward bubbles of p - 1 each.
        EXPECT_EQ(ticks, 2 * (m + p - 1)) << schedule_name(schedule) << " p=" << p << " m=" << m;
        for (std::size_t s = 0; s < p; ++s) {
          const auto order = pipeline_order(schedule, p, s, m);
          EXPECT_EQ(order.size(), 2 * m);
          EXPECT_LE(peak_activations(order),
                    schedule == PipelineSchedule::gpipe ? m : std::min(m, p - s));
        }
      }
      if (m % p != 0 || p == 1) continue;
      for (std::size_t v : {2, 3}) {
        const std::size_t ticks = run_pipeline(PipelineSchedule::interleaved, p, m, v);
        EXPECT_GT(ticks, 0u) << "interleaved p=" << p << " m=" << m << " v=" << v;
        // Each rank does 2 m v slots; the bubble shrinks to (p - 1) slots each way.
        EXPECT_LE(ticks, 2 * (m * v + p - 1) + 2 * (p - 1))
            << "p=" << p << " m=" << m << " v=" << v;
      }
    }
}

TEST(PipelineSchedule, SchedulesThatCannotRunAreClearErrors) {
  expect_contains(user_error_of([] { pipeline_order(PipelineSchedule::interleaved, 4, 0, 6, 2); }),
                  {"6 micro-batches are not a multiple of 4"});
  expect_contains(user_error_of([] { pipeline_order(PipelineSchedule::interleaved, 4, 0, 8, 1); }),
                  {"at least 2 model chunks"});
  expect_contains(user_error_of([] { pipeline_order(PipelineSchedule::one_f_one_b, 4, 0, 0); }),
                  {"at least one micro-batch"});
  expect_contains(user_error_of([] { parse_schedule("zigzag"); }),
                  {"unknown pipeline schedule 'zigzag'"});
}

}  // namespace
}  // namespace meshslice
