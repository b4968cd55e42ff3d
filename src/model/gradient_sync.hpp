#pragma once
// Data-parallel gradient averaging, overlapped with the backward pass: each parameter's
// gradient is all-reduced over the dp axis as soon as it exists, and the reduction progresses
// while the rest of the backward pass computes (the GEMM plans wait only for their own ops and
// progress everything in flight between their compute chunks). Planned like a GEMM: the
// all-reduces' scratch is allocated once, at construction, so a step allocates nothing.
//
//     GradientSync<RealExecutor<float>> sync(ex, {dw_last.shape, ..., dw_first.shape});
//     sync.begin_step();
//     ... backward of the last layer ...  sync.start(0, dw_last);
//     ... backward of the layer before ... sync.start(1, dw_prev);
//     sync.finish();   // waits, then scales every gradient by 1/dp: the average
//
// Gradients are started in the order their shapes were given (the backward pass's order).
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "gemm/executor_interface.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/workspace.hpp"

namespace meshslice {

template <class Exec>
class GradientSync {
 public:
  using Mat = typename Exec::Mat;

  GradientSync(Exec& ex, std::vector<MatrixShape> shapes) : ex_(ex), shapes_(std::move(shapes)) {
    workspace_.rehearse();
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      const Mat g = ex_.placeholder(shapes_[i].rows, shapes_[i].cols);
      const AttachedWorkspace<Exec> attached(ex_, workspace_);
      ops_.push_back(ex_.start_all_reduce(Axis::dp, g, g));
    }
    ops_.clear();
  }

  // The next backward pass starts: gradients are started afresh, in the given order.
  void begin_step() {
    require(ops_.empty(), "GradientSync: begin_step() before the previous step's finish()");
    workspace_.replay();
  }

  // Starts averaging gradient `index` (its shape as given at construction) over dp, in place.
  void start(std::size_t index, const Mat& gradient) {
    require(index == ops_.size() && index < shapes_.size(), "GradientSync: gradient ", index,
            " started out of order (next is ", ops_.size(), " of ", shapes_.size(), ")");
    require(gradient.extent(0) == shapes_[index].rows && gradient.extent(1) == shapes_[index].cols,
            "GradientSync: gradient ", index, " is ", gradient.extent(0), "x",
            gradient.extent(1), " but was planned as ", shapes_[index].rows, "x",
            shapes_[index].cols);
    const AttachedWorkspace<Exec> attached(ex_, workspace_);
    ops_.push_back(ex_.start_all_reduce(Axis::dp, gradient, gradient));
    gradients_.push_back(gradient);
  }

  std::size_t workspace_bytes() const { return workspace_.bytes(); }

  // How many gradients this step has started (the index the next start() takes).
  std::size_t started() const { return ops_.size(); }

  // Waits for every started reduction and turns the sums into averages.
  void finish() {
    require(ops_.size() == shapes_.size(), "GradientSync: finish() after ", ops_.size(), " of ",
            shapes_.size(), " gradients");
    workspace_.check_replayed();
    const double scale = 1.0 / ex_.size(Axis::dp);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      ex_.wait(ops_[i]);
      if (scale != 1.0) ex_.scale(gradients_[i], scale);
    }
    ops_.clear();
    gradients_.clear();
  }

 private:
  Exec& ex_;
  std::vector<MatrixShape> shapes_;
  typename Exec::Workspace workspace_;
  std::vector<typename Exec::OpId> ops_;
  std::vector<Mat> gradients_;
};

}  // namespace meshslice
