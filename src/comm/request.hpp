#pragma once
// A handle on an in-flight (non-blocking) collective.
//
// Every collective, MPI-native or ring, is run by one engine: a list of steps, each of which
// posts MPI requests and, once they complete, runs a local action (add a received block,
// unpack a buffer). A native collective is one step posting MPI_Iallgather & co.; a ring
// collective is P-1 steps of neighbour Isend/Irecv. test() advances as far as it can without
// blocking, which is what lets a caller drive communication forward between chunks of a GEMM:
// MPI only progresses non-blocking operations inside MPI calls.
#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "core/flight_recorder.hpp"

namespace meshslice {

struct CommStep {
  // Posts this step's MPI requests (appending to `requests`); may post nothing.
  std::function<void(std::vector<MPI_Request>& requests)> post;
  // Runs once this step's requests have completed (may be empty).
  std::function<void()> after;
};

// The engine records its operation in the flight recorder from start to completion, and carries
// out a fault the recorder injects into it (debug.inject): a skipped operation posts nothing, a
// short one posts every message one element short.
class StepEngine {
 public:
  StepEngine(std::vector<CommStep> steps, std::function<void()> on_complete, const CommOpInfo& op);
  ~StepEngine();
  StepEngine(const StepEngine&) = delete;
  StepEngine& operator=(const StepEngine&) = delete;

  bool test();  // non-blocking progress; true when every step and on_complete have run
  void wait();  // blocks until complete
  bool complete() const { return complete_; }
  std::size_t steps() const { return steps_.size(); }
  // Runs `action` after everything else on completion (at once if already complete).
  void and_then(std::function<void()> action);

 private:
  void post_current();
  void finish_current();

  std::vector<CommStep> steps_;
  std::function<void()> on_complete_;
  std::vector<MPI_Request> requests_;
  std::size_t current_ = 0;
  bool complete_ = false;
  FlightRecorder::Ticket ticket_;
};

// Elements an injected wrong_size fault takes off each message the step being posted sends or
// receives (0 otherwise); mpi_count (comm/ring_schedules.hpp) applies it.
std::size_t injected_shortfall();

// Owning, movable handle. A default-constructed Request is already complete.
class Request {
 public:
  Request() = default;
  explicit Request(std::unique_ptr<StepEngine> engine) : engine_(std::move(engine)) {}
  Request(Request&&) = default;
  Request& operator=(Request&&);
  ~Request();  // an unfinished request is waited for: never leave MPI buffers dangling

  bool test() { return !engine_ || engine_->test(); }
  void wait() {
    if (engine_) engine_->wait();
  }
  bool complete() const { return !engine_ || engine_->complete(); }
  // Chains a local action (e.g. unslicing a received sub-shard) onto completion.
  Request& and_then(std::function<void()> action);

 private:
  std::unique_ptr<StepEngine> engine_;
};

// Waits for all requests (in order; each wait also progresses MPI for the others).
void wait_all(std::vector<Request>& requests);

}  // namespace meshslice
