#include "comm/request.hpp"

#include <exception>

namespace meshslice {

namespace {
std::size_t shortfall = 0;  // only the thread that drives MPI posts (MPI_THREAD_FUNNELED)
}

std::size_t injected_shortfall() { return shortfall; }

StepEngine::StepEngine(std::vector<CommStep> steps, std::function<void()> on_complete,
                       const CommOpInfo& op)
    : steps_(std::move(steps)), on_complete_(std::move(on_complete)) {
  ticket_ = FlightRecorder::instance().begin(op, /*injectable=*/true);
  post_current();
}

StepEngine::~StepEngine() = default;

void StepEngine::post_current() {
  requests_.clear();
  if (ticket_.fault == InjectedFault::skip) return;  // as if this rank never called it
  if (current_ < steps_.size() && steps_[current_].post) {
    shortfall = ticket_.fault == InjectedFault::wrong_size ? 1 : 0;
    steps_[current_].post(requests_);
    shortfall = 0;
  }
}

void StepEngine::finish_current() {
  if (steps_[current_].after) steps_[current_].after();
  ++current_;
  post_current();
}

bool StepEngine::test() {
  while (!complete_) {
    if (current_ == steps_.size()) {
      if (on_complete_) on_complete_();
      complete_ = true;
      FlightRecorder::instance().end(ticket_.seq);
      break;
    }
    int done = 1;
    if (!requests_.empty())
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) return false;
    finish_current();
  }
  return true;
}

void StepEngine::wait() {
  FlightRecorder& recorder = FlightRecorder::instance();
  if (!complete_) recorder.wait_begin(ticket_.seq);
  while (current_ < steps_.size()) {
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    finish_current();
  }
  recorder.wait_end();
  test();  // runs on_complete
}

void StepEngine::and_then(std::function<void()> action) {
  if (complete_) {
    action();
    return;
  }
  auto previous = std::move(on_complete_);
  on_complete_ = [previous = std::move(previous), action = std::move(action)] {
    if (previous) previous();
    action();
  };
}

Request& Request::and_then(std::function<void()> action) {
  if (engine_)
    engine_->and_then(std::move(action));
  else
    action();
  return *this;
}

Request& Request::operator=(Request&& other) {
  if (this != &other) {
    wait();
    engine_ = std::move(other.engine_);
  }
  return *this;
}

Request::~Request() {
  // Waiting during stack unwinding could deadlock when peers are gone; the app aborts instead.
  if (engine_ && !engine_->complete() && std::uncaught_exceptions() == 0) engine_->wait();
}

void wait_all(std::vector<Request>& requests) {
  for (auto& request : requests) request.wait();
}

}  // namespace meshslice
