#pragma once
// The bookkeeping of emulated training steps (meshslice-train's hardware mode and data-free
// emulation, meshslice-sim's pipeline sweep): their times, the share of them with communication
// exposed, the FLOP utilization, a trace of chosen steps and the summary.
#include <mpi.h>

#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/trace.hpp"
#include "exec/sim_executor.hpp"
#include "hardware/model.hpp"

namespace meshslice::train {

class EmulatedSteps {
 public:
  struct Step {
    double seconds = 0;           // the slowest chip's
    double exposed_fraction = 0;  // of this chip's step, the cores idle waiting on communication
    double flop_utilization = 0;  // GEMM FLOP/s over the machine's utilization peak
  };

  EmulatedSteps(const hw::MachineModel& machine, double tokens_per_step)
      : machine_(machine), tokens_(tokens_per_step) {}
  // Where the combined executor records its emulated ops; attach() its emulated chip.
  std::vector<TraceEvent>* events() { return &events_; }
  void attach(sim::SimExecutor& chip) { chip_ = &chip; }
  const std::string& machine_name() const { return machine_.machine.name; }

  // Collective over `comm`: the step starts on every emulated chip at once (the run's barrier),
  // at the latest chip's clock.
  void begin_step(MPI_Comm comm);
  // Collective over `comm`. `keep`: the step's emulated ops go to the trace written by
  // write_trace().
  Step end_step(MPI_Comm comm, std::size_t step, bool keep);
  // " | TPUv4 0.41 ms, comm exposed 12%" for the progress line.
  std::string progress(const Step& step) const;
  // The run's closing line and summary.json's "emulated" object.
  std::string closing_line(double measured_best_seconds) const;
  json::Value json() const;
  const Step& best() const { return best_; }
  double tokens_per_step() const { return tokens_; }
  // Collective: OUT/trace_emulated.json (nothing kept: nothing written).
  void write_trace(const std::string& path, MPI_Comm comm) const;

 private:
  const hw::MachineModel& machine_;
  double tokens_;
  sim::SimExecutor* chip_ = nullptr;
  double start_ = 0;  // the step's emulated start
  std::vector<TraceEvent> events_;
  Trace kept_;
  sim::SimTotals before_;
  std::size_t steps_ = 0;
  double total_seconds_ = 0, total_exposed_ = 0;
  Step best_{1e30, 0, 0};
};


}  // namespace meshslice::train
