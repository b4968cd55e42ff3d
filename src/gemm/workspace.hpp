#pragma once
// A plan's workspace: every buffer an algorithm asks its executor for and every scratch area
// its collectives need, allocated once and handed back on every run.
//
// An algorithm's buffers and ops depend only on the problem, the mesh, this chip's coordinates
// and the options, never on the data. So a plan is made by *rehearsing* the algorithm once with
// a rehearsing workspace attached to the executor: nothing executes, each alloc() allocates and
// records a buffer and each collective records the scratch it will need, in call order. Every
// run then *replays* the algorithm with the workspace attached: the same calls in the same order
// receive the recorded buffers back, and nothing is allocated. A replay that asks for something
// else than the rehearsal recorded is a logic error (a data-dependent algorithm), reported as
// such rather than silently allocating.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace meshslice {

template <class Mat, class Scratch>
class Workspace {
 public:
  enum class Mode { rehearse, replay };

  // Forget everything and record from now on.
  void rehearse() {
    buffers_.clear();
    scratch_.clear();
    mode_ = Mode::rehearse;
    next_buffer_ = next_scratch_ = 0;
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

  // The next collective's scratch: made by make() and recorded when rehearsing.
  template <class Make>
  Scratch scratch(Make&& make) {
    if (rehearsing()) {
      scratch_.push_back(make());
      return scratch_.back();
    }
    if (next_scratch_ >= scratch_.size())
      throw std::logic_error("workspace replay started more collectives than its rehearsal");
    return scratch_[next_scratch_++];
  }

  // After a replay: everything recorded was used (the run took the rehearsed path).
  void check_replayed() const {
    if (!rehearsing() && (next_buffer_ != buffers_.size() || next_scratch_ != scratch_.size()))
      throw std::logic_error("workspace replay used " + std::to_string(next_buffer_) + " of " +
                             std::to_string(buffers_.size()) + " buffers and " +
                             std::to_string(next_scratch_) + " of " +
                             std::to_string(scratch_.size()) + " scratch areas");
  }

  std::size_t buffer_count() const { return buffers_.size(); }
  std::size_t scratch_count() const { return scratch_.size(); }

 private:
  Mode mode_ = Mode::rehearse;
  std::vector<Mat> buffers_;
  std::vector<Scratch> scratch_;
  std::size_t next_buffer_ = 0;
  std::size_t next_scratch_ = 0;
};

// Scratch of an executor whose collectives need none (the emulating executor).
struct NoScratch {};

}  // namespace meshslice
