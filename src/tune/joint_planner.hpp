#pragma once
// The joint planner (beyond the paper): on `chips` chips, every dp x pp x rows x cols with each
// micro-batch count, schedule, checkpointing and ZeRO-1 choice, timed and sized by
// tune/step_estimate.hpp with phases 1 and 2 per stage (each distinct micro-batch size and
// tensor-parallel degree tuned once; a language model's mesh is the one fastest for its blocks
// and its head together). Configurations that cannot run (a batch that does not
// split, more stages than blocks, a mesh no GEMM fits) or that exceed the memory per chip are
// rejected and counted by the constraint that failed; the rest are ranked by predicted step time.
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tune/step_estimate.hpp"

namespace meshslice::tune {

struct PlannerOptions {
  sim::SweepOptions search;  // phase 2's S candidates, block size, mesh sides
  sim::AttentionLayout attention = sim::AttentionLayout::standard;
  std::vector<std::size_t> microbatches = {1, 2, 4, 8, 16, 32, 64};
  std::vector<PipelineSchedule> schedules = {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                                             PipelineSchedule::interleaved};
  std::size_t virtual_stages = 2;  // of the interleaved schedule
  std::vector<bool> checkpointing = {false, true};
  std::vector<bool> zero = {false, true};
  double memory_bytes = 0;  // per chip
  // How the chips keep and move their tensors; unset: TensorBytes::pure at the machine's width.
  std::optional<TensorBytes> tensor_bytes;
  std::size_t top = 10;
};

struct Candidate {
  TrainingConfig config;
  std::shared_ptr<const MeshChoice> mesh;  // phases 1 and 2 for the micro-batch on rows x cols
  std::shared_ptr<const MeshChoice> head;  // the head's on the same mesh; null without a vocab
  StepEstimate step;
  MemoryEstimate memory;
  double flop_utilization = 0;
};

struct Rejected {
  TrainingConfig config;
  std::string constraint;  // "memory", "batch split", ...
  std::string detail;
  double excess = 0;  // memory: estimate / cap (closest first)
};

struct PlanSearch {
  std::vector<Candidate> ranked;                // the fastest `top`, fastest first
  std::size_t feasible = 0;                     // configurations that fit
  std::map<std::string, std::size_t> rejected;  // per constraint
  std::vector<Rejected> closest;                // the rejected configurations nearest to fitting
  double seconds = 0;                           // the search's own time

  // The fastest; a UserError naming the constraint each of the closest candidates failed when
  // nothing fits.
  const Candidate& best() const;
};

PlanSearch plan_training(const CostModel& model, const TrainingModel& m, int chips,
                         const PlannerOptions& options);

// Why `c` lost to `best`: the part of the step where it spends the most more, e.g.
// "bubble +41.2 ms".
std::string why_slower(const Candidate& c, const Candidate& best);

}  // namespace meshslice::tune
