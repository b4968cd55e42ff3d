#pragma once
// Scratch areas shared by collectives that are not in flight at the same time: an area is handed
// out again only after the op holding it was released. A plan's rehearsal fills one (its
// workspace: exec/workspace.hpp), and so does the executor for collectives started without a
// plan (the pipeline's sends and receives), so S messages with two in flight need two areas.
#include <cstddef>
#include <vector>

namespace meshslice {

template <class Scratch>
class ScratchPool {
 public:
  // The slot of an area that no op holds and that fits(area) accepts, else of a new one made by
  // make(); held until release(slot).
  template <class Make, class Fits>
  std::size_t acquire(Make&& make, Fits&& fits) {
    for (std::size_t slot = 0; slot < areas_.size(); ++slot)
      if (!held_[slot] && fits(areas_[slot])) {
        held_[slot] = true;
        return slot;
      }
    areas_.push_back(make());
    held_.push_back(true);
    return areas_.size() - 1;
  }
  void release(std::size_t slot) {
    if (slot < held_.size()) held_[slot] = false;
  }
  void clear() {
    areas_.clear();
    held_.clear();
  }

  const Scratch& operator[](std::size_t slot) const { return areas_[slot]; }
  const std::vector<Scratch>& areas() const { return areas_; }

 private:
  std::vector<Scratch> areas_;
  std::vector<bool> held_;  // areas_[i] belongs to an op in flight
};

}  // namespace meshslice
