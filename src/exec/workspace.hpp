#pragma once
// A plan's workspace: every buffer an algorithm asks its executor for and every scratch area
// its collectives need, allocated once and handed back on every run.
//
// An algorithm's buffers and ops depend only on the problem, the mesh, this chip's coordinates
// and the options, never on the data. So a plan is made by *rehearsing* the algorithm once with
// a rehearsing workspace attached to the executor: nothing executes, each alloc() allocates and
// records a buffer and each collective reserves the scratch it will need (reusing the scratch of
// collectives already waited for), in call order. Every run then *replays* the algorithm with
// the workspace attached: the same calls in the same order receive the recorded buffers back,
// and nothing is allocated. A replay that asks for something
// else than the rehearsal recorded is a logic error (a data-dependent algorithm), reported as
// such rather than silently allocating.
#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "exec/scratch_pool.hpp"

namespace meshslice {

template <class Mat, class Scratch>
class Workspace {
 public:
  enum class Mode { rehearse, replay };

  // Forget everything and record from now on.
  void rehearse() {
    buffers_.clear();
    scratch_.clear();
    slots_.clear();
    mode_ = Mode::rehearse;
    next_buffer_ = next_scratch_ = 0;
    as_given_ = {};
  }
  // Hand back the recorded items from the first one on.
  void replay() {
    mode_ = Mode::replay;
    next_buffer_ = next_scratch_ = 0;
  }
  bool rehearsing() const { return mode_ == Mode::rehearse; }

  // The next buffer: made by make() and recorded when rehearsing, the recorded one (which must
  // have this shape) when replaying.
  template <class Make>
  Mat buffer(std::size_t rows, std::size_t cols, Make&& make) {
    if (rehearsing()) {
      buffers_.push_back(make());
      return buffers_.back();
    }
    if (next_buffer_ >= buffers_.size())
      throw std::logic_error("workspace replay asked for more buffers than its rehearsal");
    const Mat& m = buffers_[next_buffer_++];
    if (m.extent(0) != rows || m.extent(1) != cols)
      throw std::logic_error("workspace replay asked for a buffer of another shape than its "
                             "rehearsal");
    return m;
  }

  // The scratch of the collective being started. Rehearsing: a recorded scratch that no op in
  // flight holds and that fits(scratch) accepts, else a new one made by make(); it stays held
  // until release(slot). Replaying: the same slot as in the rehearsal, so a scratch is reused
  // only after the op that held it was waited for, and a pipeline of S slices with two in
  // flight needs two scratch areas, not S. Returns the slot and its scratch.
  template <class Make, class Fits>
  std::pair<std::size_t, Scratch> scratch(Make&& make, Fits&& fits) {
    if (rehearsing()) {
      const std::size_t slot = scratch_.acquire(make, fits);
      slots_.push_back(slot);
      return {slot, scratch_[slot]};
    }
    if (next_scratch_ >= slots_.size())
      throw std::logic_error("workspace replay started more collectives than its rehearsal");
    const std::size_t slot = slots_[next_scratch_++];
    return {slot, scratch_[slot]};
  }
  // Rehearsing: the op holding `slot` was waited for; its scratch may serve the next one.
  void release(std::size_t slot) {
    if (rehearsing()) scratch_.release(slot);
  }

  // Rehearsing: `elements` of the caller's operand `which` (0: A, 1: B) reached a local GEMM as
  // the caller gave it, not sliced or gathered into a buffer of the plan (a bf16 run rounds it
  // there if it arrives in float: GemmPlan::reserve_rounding).
  void note_operand_as_given(int which, std::size_t elements) {
    if (rehearsing()) as_given_[which] = std::max(as_given_[which], elements);
  }
  // The most elements of operand `which` that reached a local GEMM as given (0: never).
  std::size_t operand_as_given(int which) const { return as_given_[which]; }

  // Bytes of the recorded buffers and scratch areas (device and host staging): what the plan
  // holds between runs, for memory estimates.
  std::size_t bytes() const {
    std::size_t total = 0;
    for (const Mat& m : buffers_) total += elements(m) * sizeof(typename Mat::value_type);
    for (const Scratch& s : scratch_.areas())
      total += elements(s.device) * sizeof(typename decltype(s.device)::value_type) +
               elements(s.host) * sizeof(typename decltype(s.host)::value_type);
    return total;
  }

  // After a replay: everything recorded was used (the run took the rehearsed path).
  void check_replayed() const {
    if (!rehearsing() && (next_buffer_ != buffers_.size() || next_scratch_ != slots_.size()))
      throw std::logic_error("workspace replay used " + std::to_string(next_buffer_) + " of " +
                             std::to_string(buffers_.size()) + " buffers and " +
                             std::to_string(next_scratch_) + " of " +
                             std::to_string(slots_.size()) + " collectives' scratch");
  }

 private:
  Mode mode_ = Mode::rehearse;
  std::vector<Mat> buffers_;
  ScratchPool<Scratch> scratch_;
  std::vector<std::size_t> slots_;  // the scratch slot of each collective, in start order
  std::size_t next_buffer_ = 0;
  std::size_t next_scratch_ = 0;
  std::array<std::size_t, 2> as_given_{};  // note_operand_as_given
};

// Scratch of an executor whose collectives need none (the emulating executor).
struct NoScratch {};

// Attaches a workspace to an executor for the lifetime of the object (detached on any exit,
// exceptions included): how a plan runs its rehearsal and its replays.
template <class Exec>
class AttachedWorkspace {
 public:
  AttachedWorkspace(Exec& ex, typename Exec::Workspace& workspace) : ex_(ex) {
    ex_.use_workspace(&workspace);
  }
  ~AttachedWorkspace() { ex_.use_workspace(nullptr); }
  AttachedWorkspace(const AttachedWorkspace&) = delete;
  AttachedWorkspace& operator=(const AttachedWorkspace&) = delete;

 private:
  Exec& ex_;
};

}  // namespace meshslice
