#include "run_clock.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/log.hpp"

namespace meshslice::train {
namespace {

constexpr std::size_t kRecentSteps = 20;

// Of the steps after `step`, how many are multiples of `every` (0: none), plus the last one when
// it is due anyway (`at_end`) and not a multiple.
std::size_t due_after(std::size_t step, std::size_t steps, std::size_t every, bool at_end) {
  if (step >= steps) return 0;
  std::size_t due = every > 0 ? steps / every - step / every : 0;
  const bool last_is_multiple = every > 0 && steps % every == 0;
  if (at_end && !last_is_multiple) ++due;
  return due;
}

}  // namespace

void RunClock::begin_steps() {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double added = std::accumulate(seconds_.begin(), seconds_.end(), 0.0);
  add(Phase::start_up, std::max(0.0, elapsed - added));
}

void RunClock::add(Phase phase, double seconds, bool another) {
  const auto i = static_cast<std::size_t>(phase);
  seconds_[i] += seconds;
  if (another || counts_[i] == 0) ++counts_[i];
  if (phase != Phase::training) return;
  recent_steps_.push_back(seconds);
  if (recent_steps_.size() > kRecentSteps) recent_steps_.pop_front();
}

double RunClock::seconds_left(std::size_t step) const {
  if (step >= settings_.steps) return 0;
  const auto mean = [&](Phase phase) {
    const auto i = static_cast<std::size_t>(phase);
    return counts_[i] > 0 ? seconds_[i] / static_cast<double>(counts_[i]) : 0.0;
  };
  const double step_mean = recent_steps_.empty()
                               ? 0.0
                               : std::accumulate(recent_steps_.begin(), recent_steps_.end(), 0.0) /
                                     static_cast<double>(recent_steps_.size());
  const std::size_t evals = due_after(step, settings_.steps, settings_.eval_every, true);
  const CheckpointSettings& c = settings_.checkpoint;
  const std::size_t saves = due_after(step, settings_.steps, c.every, c.at_end);
  // The records' time (train.csv, events, the plot at evaluations) goes with the steps.
  return static_cast<double>(settings_.steps - step) * (step_mean + mean(Phase::records)) +
         static_cast<double>(evals) * mean(Phase::evaluation) +
         static_cast<double>(saves) * mean(Phase::checkpoints);
}

std::string RunClock::summary() const {
  const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
  const double added = std::accumulate(seconds_.begin(), seconds_.end(), 0.0);
  const char* names[] = {"start-up", "training", "evaluation", "checkpoints", "records"};
  std::string text = concat("wall time ", format_duration(wall), ":");
  const auto part = [&](const char* name, double seconds) {
    const int percent = wall > 0 ? static_cast<int>(std::lround(100 * seconds / wall)) : 0;
    char figure[32];
    std::snprintf(figure, sizeof figure, "%.3g s", seconds);
    return concat(" ", name, " ", figure, " (", percent, "%)");
  };
  for (std::size_t i = 0; i < seconds_.size(); ++i)
    text += concat(i ? "," : "", part(names[i], seconds_[i]));
  // Logging, the last summaries and the barriers between the phases.
  text += concat(",", part("other", std::max(0.0, wall - added)));
  return text;
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char text[32];
  if (seconds < 10)
    std::snprintf(text, sizeof text, "%.1fs", std::max(0.0, seconds));
  else if (s < 60)
    std::snprintf(text, sizeof text, "%lds", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return text;
}

}  // namespace meshslice::train
