#pragma once
// meshslice-train's checkpoints (checkpoint/checkpoint.hpp): the resume at start-up
// (checkpoint.resume, --resume PATH|auto), a save every checkpoint.every steps and after the last
// one, and the early stop a batch system asks for: SIGTERM or SIGUSR1 (Slurm's --signal) makes
// every rank finish its step, save, and end with kExitResumable (core/app.hpp), so the job
// script can requeue itself with --resume auto.
//
//     TrainCheckpoints checkpoints(context, settings, torus);
//     const std::size_t done = checkpoints.resume(model.parameters(), model.optimizer());
//     for (step = done + 1; ...) { ...; if (checkpoints.after_step(step, params, opt, lr)) break; }
//     return checkpoints.exit_status();
#include <csignal>
#include <cstddef>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "core/app.hpp"
#include "mesh/torus.hpp"
#include "train_settings.hpp"

namespace meshslice::train {

class TrainCheckpoints {
 public:
  // Installs the SIGTERM and SIGUSR1 handlers.
  TrainCheckpoints(const AppContext& context, const Settings& settings, const Torus& torus);

  // Loads the checkpoint checkpoint.resume names, if any; returns the steps it had done (0: a
  // fresh start). Collective.
  template <class T>
  std::size_t resume(const ParameterSet<T>& params, const Optimizer<T>& optimizer);

  // After step `step`: saves when one is due or a signal asked every rank to stop (agreed over
  // the job: one all-reduce); true when the run stops here.
  template <class T>
  bool after_step(std::size_t step, double lr, const ParameterSet<T>& params,
                  const Optimizer<T>& optimizer);

  // The seconds the save in the last after_step took; 0 when it saved nothing.
  double last_save_seconds() const { return last_save_seconds_; }
  // 0, or kExitResumable after a stop.
  int exit_status() const { return stopped_ ? kExitResumable : 0; }
  // The rows of the previous OUT/train.csv up to the resumed step (a resumed run keeps them).
  const std::vector<std::string>& earlier_rows() const { return earlier_rows_; }

 private:
  CheckpointFacts facts(std::size_t step, double lr) const;

  const Settings& settings_;
  const Torus& torus_;
  std::string deck_, out_dir_;
  bool stopped_ = false;
  double last_save_seconds_ = 0;
  std::vector<std::string> earlier_rows_;
};

}  // namespace meshslice::train
