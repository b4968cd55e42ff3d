#include "train_emulation/emulated_steps.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "sim/sweep.hpp"

namespace meshslice::train {

void EmulatedSteps::begin_step(MPI_Comm comm) {
  events_.clear();
  start_ = chip_->now();
  MPI_Allreduce(MPI_IN_PLACE, &start_, 1, MPI_DOUBLE, MPI_MAX, comm);
  chip_->advance_to(start_);
  before_ = chip_->totals();
}

EmulatedSteps::Step EmulatedSteps::end_step(MPI_Comm comm, std::size_t step, bool keep) {
  const sim::SimTotals after = chip_->totals();
  const double own = after.seconds - start_;
  Step s;
  MPI_Allreduce(&own, &s.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
  const double busy = (after.compute - before_.compute) + (after.local - before_.local);
  s.exposed_fraction = own > 0 ? (own - busy) / own : 0.0;
  s.flop_utilization = s.seconds > 0 ? sim::flop_utilization(after.flops - before_.flops, 1,
                                                             s.seconds, machine_.machine)
                                     : 0.0;
  ++steps_;
  total_seconds_ += s.seconds;
  total_exposed_ += s.exposed_fraction;
  if (s.seconds < best_.seconds) best_ = s;
  if (keep) {
    for (const TraceEvent& e : events_) kept_.add(e);
    kept_.add(TraceEvent{concat("step ", step), TraceLane::phase, start_, after.seconds});
  }
  return s;
}

std::string EmulatedSteps::progress(const Step& s) const {
  return concat("  | ", machine_name(), " ", s.seconds * 1e3, " ms, comm exposed ",
                static_cast<int>(std::lround(100 * s.exposed_fraction)), "%");
}

std::string EmulatedSteps::closing_line(double measured_best_seconds) const {
  return concat("emulated ", machine_name(), " step: best ", best_.seconds * 1e3, " ms (",
                static_cast<long>(tokens_ / best_.seconds), " tokens/s, ",
                100 * best_.flop_utilization, "% FLOP utilization, comm exposed ",
                static_cast<int>(std::lround(100 * best_.exposed_fraction)), "%), ",
                measured_best_seconds / best_.seconds, "x faster than the measured best step");
}

json::Value EmulatedSteps::json() const {
  json::Value out = json::Value::object();
  out.set("machine", machine_name());
  out.set("best_step_seconds", json::Value::number_or_null(best_.seconds));
  out.set("mean_step_seconds", json::Value::number_or_null(total_seconds_ / steps_));
  out.set("tokens_per_second", json::Value::number_or_null(tokens_ / best_.seconds));
  out.set("flop_utilization", json::Value::number_or_null(best_.flop_utilization));
  out.set("mean_exposed_comm_fraction", json::Value::number_or_null(total_exposed_ / steps_));
  return out;
}

void EmulatedSteps::write_trace(const std::string& path, MPI_Comm comm) const {
  if (!kept_.events().empty()) write_chrome_trace(kept_, path, comm);
}

}  // namespace meshslice::train
