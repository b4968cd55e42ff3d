#pragma once
// meshslice-train's deck: the valid parameters (documented for --help and the README) and the
// settings read from a validated deck.
#include <Teuchos_ParameterList.hpp>

#include <cstddef>
#include <memory>
#include <set>
#include <string>

#include "comm/comm_options.hpp"
#include "core/app.hpp"
#include "core/flight_recorder.hpp"
#include "hardware/model.hpp"
#include "mesh/torus.hpp"
#include "model/layer_plan.hpp"
#include "model/model_config.hpp"
#include "model/step_settings.hpp"
#include "model/token_sampling.hpp"

namespace meshslice::train {

Teuchos::ParameterList valid_parameters();

// Checkpoints of the training state (checkpoint/checkpoint.hpp).
struct CheckpointSettings {
  std::size_t every = 0;  // steps between saves; 0 = none but the last
  std::size_t keep = 3;   // newest complete ones kept; 0 = all
  bool at_end = true;     // after the last step, or when a signal stops the run
  std::string dir;        // OUT/checkpoints unless the deck says
  std::string resume;     // a checkpoint, "auto" or "" (a fresh start)
};

// task lm: the token dataset.
struct DataSettings {
  std::string prefix;  // PREFIX.bin + PREFIX.idx
  double held_out = 0.05;
  bool byte_level = true;  // a token is a byte: bits per byte
};

struct Settings {
  MeshShape mesh;
  CommOptions comm;
  ModelShape model;
  StepSettings step;  // pipeline schedule, micro-batches, recomputation, ZeRO-1
  OptimizerSettings optimizer;
  TaskSeeds seeds;
  bool lm = false;  // train.task = lm: model.vocab > 0 and the dataset of `data`
  DataSettings data;
  std::size_t sample_every = 0;  // lm: greedy samples every N steps (0: none)
  std::string sample_prompt;
  std::size_t sample_tokens = 64;
  TokenSampling sampling;  // the seed mixed with the step at each sample
  std::size_t steps = 0;
  std::size_t eval_every = 0;  // 0: only after the last step
  std::size_t eval_batches = 0;
  std::size_t log_every = 1;
  bool tensorboard = true;      // OUT/tensorboard/ event files
  bool plot = true;             // OUT/train.png through gnuplot
  bool skip_nonfinite = false;  // train.on_nonfinite: skip (else stop)
  std::size_t max_skipped = 10;
  CheckpointSettings checkpoint;
  std::string precision;  // "float", "double", "bf16" (float storage, bf16 GEMM operands) or
                          // "tf32" (float storage, TF32 GEMMs; CUDA builds)
  int gemm_chunks = 8;
  int fail_at_collective = -1;  // test aid (debug.fail_at_collective): -1 = off
  int fail_on_rank = 0;
  FlightSettings flight;              // comm.flight_recorder, comm.timeout_seconds, debug.inject*
  std::set<std::size_t> trace_steps;  // steps written to OUT/trace.json
  // Hardware mode: every op of the step is also timed on this emulated machine (null: off).
  std::shared_ptr<const hw::MachineModel> machine;
  bool emulate_only = false;  // no real run: the data-free emulation (train_emulate_only.hpp)
  // The plan: "default" (the paper's phase-1 rule, every GEMM running default_choice),
  // "layers" (the explicit entries) or "file" (a YAML file whose `layers` key holds them).
  std::string plan_source;
  GemmChoice default_choice;
  AttentionKernel attention = default_attention_kernel();  // plan.attention, auto resolved
  std::vector<std::string> plan_layers;  // "layers": the deck's; "file": the plan file's
  std::string plan_file;
  std::string plan_applied;  // the deck keys the plan file set ("mesh.rows = 8, ..."), if any
};

Settings settings_from(const AppContext& context);

// The block plan the settings ask for.
ModelPlan model_plan(const Settings& settings);

}  // namespace meshslice::train
