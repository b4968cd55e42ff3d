#pragma once
// What meshslice-tune prints and writes: the phase-1 table (each FC layer's row of Table 1,
// transposition and sharding), the phase-2 table (every mesh shape with its per-GEMM S), the
// emulator check, the joint planner's ranking, OUT/tune.csv, OUT/planner.csv and OUT/plan.yaml
// (the plan meshslice-train runs).
#include <string>
#include <vector>

#include "hardware/machine.hpp"
#include "tune/block_tuner.hpp"
#include "tune/calibration.hpp"
#include "tune/emulator_check.hpp"
#include "tune/joint_planner.hpp"
#include "tune_settings.hpp"

namespace meshslice::tuneapp {

void print_phase1(const TuneSettings& s, const std::vector<sim::FcGemm>& gemms);
void print_phase2(const TuneSettings& s, const tune::BlockTuning& tuning,
                  const hw::Machine& machine);
void print_validation(const tune::EmulatorCheck& check, const tune::BlockTuning& tuning,
                      const hw::Machine& machine);

// One row per usable mesh and GEMM: the S chosen there and its predicted seconds (and, with a
// check, the mesh's emulated block time).
void write_tune_csv(const std::string& path, const tune::BlockTuning& tuning,
                    const tune::EmulatorCheck* check);

// The joint planner's ranking: each configuration's step time and its parts, FLOP utilization,
// memory per chip and why it lost to the best; the rejections per constraint.
void print_planner(const TuneSettings& s, const tune::PlanSearch& search, int chips,
                   const hw::Machine& machine);
void write_planner_csv(const std::string& path, const tune::PlanSearch& search);

// Calibration: the fitted constants and each fit's error on the measured points; every sample
// with the fitted machine's prediction in OUT/calibration.csv.
void print_calibration(const tune::Calibration& c, const hw::MachineModel& machine);
void write_calibration_csv(const std::string& path, const tune::Calibration& c,
                           const hw::MachineModel& machine);

// A configuration's plan in meshslice-train's plan-file form: what it was made for (hidden, heads,
// tokens per replica), the mesh, the pipeline, checkpointing, ZeRO-1 and one entry per FC layer
// with its S per pass (`mesh`: phases 1 and 2 for the configuration's micro-batch), and the
// language model's head's when `head` is given (its GEMMs tuned on the same mesh).
void write_plan(const std::string& path, const TuneSettings& s, const tune::TrainingConfig& config,
                const tune::MeshChoice& mesh, const tune::MeshChoice* head,
                const std::string& machine_name);

// A language model's head (s.vocab > 0, `head` from tune::tune_lm_head on the configuration's
// mesh for `tokens` per micro-batch): its dataflow, S per pass and time, printed. UserError when
// no candidate S fits one of its GEMMs.
void print_lm_head(const TuneSettings& s, const tune::TrainingConfig& config, std::size_t tokens,
                   const tune::MeshChoice& head);

}  // namespace meshslice::tuneapp
