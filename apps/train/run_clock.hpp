#pragma once
// Where meshslice-train's wall time goes (start-up, training, evaluation, checkpoints, records)
// and how
// much the run still has: the mean of the recent steps times the steps left, plus the
// evaluations and checkpoint saves still due at what each took so far. Printed on every progress
// line ("time left 12m05s") and, split by phase, at the end.
//
//     RunClock clock(settings);                        // start-up counts from here
//     clock.add(RunClock::Phase::evaluation, seconds);  // the evaluation before step 1
//     clock.begin_steps();
//     ... each step: clock.add(Phase::training, s); clock.add(Phase::checkpoints, s); ...
//     log_info(..., "  time left ", format_duration(clock.seconds_left(step)));
//     log_info(clock.summary());
#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <string>

#include "train_settings.hpp"

namespace meshslice::train {

class RunClock {
 public:
  // records: train.csv, the TensorBoard events and the loss plot (gnuplot at each evaluation).
  enum class Phase { start_up, training, evaluation, checkpoints, records, count };

  explicit RunClock(const Settings& settings) : settings_(settings) {}

  // The time since construction, less what was added meanwhile, is start-up.
  void begin_steps();
  // `seconds` of `phase`; a training step's time feeds the recent mean (the last 20 steps).
  // `another` false: more of the same occurrence (a sample after an evaluation), which the mean
  // per occurrence includes.
  void add(Phase phase, double seconds, bool another = true);

  // After step `step`: the recent step mean and the records' per step times the steps left, plus
  // the evaluations and saves still due (each at the mean of those so far; none yet: a save is
  // not counted).
  double seconds_left(std::size_t step) const;
  // "wall time 1m21s: start-up 3.1 s (4%), training 70.3 s (87%), ..." since construction.
  std::string summary() const;

 private:
  using Clock = std::chrono::steady_clock;
  const Settings& settings_;
  Clock::time_point start_ = Clock::now();
  std::array<double, static_cast<std::size_t>(Phase::count)> seconds_{};
  std::array<std::size_t, static_cast<std::size_t>(Phase::count)> counts_{};
  std::deque<double> recent_steps_;
};

// 4.2s, 42s, 3m05s, 2h07m: a duration at the precision a person reads a countdown with.
std::string format_duration(double seconds);

}  // namespace meshslice::train
