#include "comm/request.hpp"

#include <exception>

namespace meshslice {

StepEngine::StepEngine(std::vector<CommStep> steps, std::function<void()> on_complete)
    : steps_(std::move(steps)), on_complete_(std::move(on_complete)) {
  post_current();
}

StepEngine::~StepEngine() = default;

void StepEngine::post_current() {
  requests_.clear();
  if (current_ < steps_.size() && steps_[current_].post) steps_[current_].post(requests_);
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
      break;
    }
    int done = 1;
    if (!requests_.empty())
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                  MPI_STATUSES_IGNORE);
    if (!done) return false;
    finish_current();
  }
  return true;
}

void StepEngine::wait() {
  while (current_ < steps_.size()) {
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    finish_current();
  }
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
