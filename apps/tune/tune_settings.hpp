#pragma once
// meshslice-tune's deck: the mode, the model and batch, the machine and its chip count, phase 2's
// search space (slice candidates, block size, mesh sides), whether to check the result on the
// emulator, and the joint planner's search (micro-batches, schedules, checkpointing, ZeRO-1,
// memory per chip).
#include <Teuchos_ParameterList.hpp>

#include <cstddef>
#include <string>

#include "parameters/optimizers/optimizer_settings.hpp"
#include "sim/fc_layers.hpp"
#include "sim/sweep.hpp"
#include "tune/calibration.hpp"
#include "tune/cost_model.hpp"
#include "tune/joint_planner.hpp"

namespace meshslice::tuneapp {

struct TuneSettings {
  std::string mode;       // "tune" (phases 1 and 2), "plan" (the joint planner), "calibrate"
  std::string machine;    // name of a shipped description or a path
  std::string precision;  // the run's train.precision, or "machine": its description's width
  int chips = 0;
  sim::LlmSpec llm;  // a named model, or custom hidden/heads
  std::size_t seq_len = 0;
  std::size_t sequences = 0;  // the global batch
  std::size_t vocab = 0;      // a language model's vocabulary (its head is planned); 0: none
  OptimizerKind optimizer;    // plan: whose state the memory estimate counts
  sim::SweepOptions search;
  sim::AttentionLayout attention = sim::AttentionLayout::standard;
  tune::GemmRate gemm_rate = tune::GemmRate::per_shape;
  bool validate = false;                 // emulate the choice and the emulator's optimum
  std::size_t blocks = 0;                // plan: the model's transformer blocks
  tune::PlannerOptions planner;          // plan: the search (its memory_bytes 0: the machine's HBM)
  tune::CalibrationOptions calibration;  // calibrate: what is timed (comm options: the deck's)
  std::string calibration_name;

  std::size_t tokens() const { return seq_len * sequences; }
};

Teuchos::ParameterList valid_parameters();
// Reads and checks the validated deck; UserErrors name the key and the fix.
TuneSettings tune_settings_from(const Teuchos::ParameterList& deck);

}  // namespace meshslice::tuneapp
