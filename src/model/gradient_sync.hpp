#pragma once
// Data-parallel gradient averaging, overlapped with the backward pass: each parameter's
// gradient is reduced over the dp axis as soon as it exists, and the reduction progresses
// while the rest of the backward pass computes (the GEMM plans wait only for their own ops and
// progress everything in flight between their compute chunks). Planned like a GEMM: the
// collectives' scratch is allocated once, at construction, so a step allocates nothing.
//
//     GradientSync<RealExecutor<float>> sync(ex, std::vector<MatrixShape>{dw_last, ..., dw_first});
//     sync.begin_step();
//     ... backward of the last layer ...  sync.start(0, dw_last);
//     ... backward of the layer before ... sync.start(1, dw_prev);
//     sync.finish();   // waits, then scales every gradient by 1/dp: the average
//
// ZeRO-1 (optimizer state sharded over dp): a reduction planned with `scatter` reduce-scatters
// the gradient, viewed as dp x (n / dp) rows, into this replica's row, its shard; after the
// optimizer has updated that shard of the parameter, gather() puts the parameter together again:
//
//     GradientSync<...> sync(ex, {{{dp, n / dp}, /*scatter=*/true}, ...});
//     sync.start(0, flat_gradient, shard);   ... sync.finish();   // shard = the averaged row
//     ... update the parameter's row from the shard ...
//     sync.begin_gather();
//     sync.gather(0, updated_row_copy, flat_parameter);
//     sync.finish_gather();
//
// Gradients are started in the order they were given (the backward pass's order), and gathered
// in the same order.
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "exec/executor_interface.hpp"
#include "exec/workspace.hpp"
#include "gemm/gemm_problem.hpp"

namespace meshslice {

// One gradient's reduction over dp: all-reduced in place, or (`scatter`) reduce-scattered by rows
// into this replica's shard; its parameter's gather then moves dp rows of `gather_cols` (0: the
// gradient's columns; fewer where the parameter travels in bf16, as T's that hold its bytes).
struct DpReduction {
  MatrixShape shape;
  bool scatter = false;
  std::size_t gather_cols = 0;
};

template <class Exec>
class GradientSync {
 public:
  using Mat = typename Exec::Mat;

  GradientSync(Exec& ex, const std::vector<MatrixShape>& shapes)
      : GradientSync(ex, all_reduced(shapes)) {}

  GradientSync(Exec& ex, std::vector<DpReduction> reductions)
      : ex_(ex), reductions_(std::move(reductions)) {
    const std::size_t dp = static_cast<std::size_t>(ex_.size(Axis::dp));
    workspace_.rehearse();
    gather_workspace_.rehearse();
    for (const DpReduction& r : reductions_) {
      MESHSLICE_ASSERT(!r.scatter || r.shape.rows == dp,
                       "GradientSync: a scattered gradient is viewed as dp = ", dp, " rows, not ",
                       r.shape.rows);
      const Mat g = ex_.placeholder(r.shape.rows, r.shape.cols);
      const Mat shard = ex_.placeholder(1, r.shape.cols);
      {
        const AttachedWorkspace<Exec> attached(ex_, workspace_);
        ops_.push_back(r.scatter ? ex_.start_reduce_scatter(Axis::dp, g, shard, MatrixDim::rows)
                                 : ex_.start_all_reduce(Axis::dp, g, g));
      }
      if (r.scatter) {
        const std::size_t cols = r.gather_cols ? r.gather_cols : r.shape.cols;
        const AttachedWorkspace<Exec> attached(ex_, gather_workspace_);
        gathers_.push_back(ex_.start_all_gather(Axis::dp, ex_.placeholder(1, cols),
                                                ex_.placeholder(dp, cols), MatrixDim::rows));
      }
    }
    ops_.clear();
    gathers_.clear();
  }

  // The next backward pass starts: gradients are started afresh, in the given order.
  void begin_step() {
    MESHSLICE_ASSERT(ops_.empty(),
                     "GradientSync: begin_step() before the previous step's finish()");
    workspace_.replay();
  }

  bool scatters(std::size_t index) const { return reductions_.at(index).scatter; }

  // Starts averaging gradient `index` (its shape as given at construction) over dp: in place,
  // or into `shard` (1 x cols) when it scatters.
  void start(std::size_t index, const Mat& gradient, const Mat& shard = Mat()) {
    MESHSLICE_ASSERT(index == ops_.size() && index < reductions_.size(), "GradientSync: gradient ",
                     index, " started out of order (next is ", ops_.size(), " of ",
                     reductions_.size(), ")");
    const DpReduction& r = reductions_[index];
    MESHSLICE_ASSERT(gradient.extent(0) == r.shape.rows && gradient.extent(1) == r.shape.cols,
                     "GradientSync: gradient ", index, " is ", gradient.extent(0), "x",
                     gradient.extent(1), " but was planned as ", r.shape.rows, "x", r.shape.cols);
    MESHSLICE_ASSERT(!r.scatter || (shard.extent(0) == 1 && shard.extent(1) == r.shape.cols),
                     "GradientSync: gradient ", index, " is reduce-scattered and needs its 1x",
                     r.shape.cols, " shard");
    const AttachedWorkspace<Exec> attached(ex_, workspace_);
    ops_.push_back(r.scatter ? ex_.start_reduce_scatter(Axis::dp, gradient, shard, MatrixDim::rows)
                             : ex_.start_all_reduce(Axis::dp, gradient, gradient));
    reduced_.push_back(r.scatter ? shard : gradient);
  }

  std::size_t workspace_bytes() const { return workspace_.bytes() + gather_workspace_.bytes(); }

  // Waits for every started reduction and turns the sums into averages.
  void finish() {
    MESHSLICE_ASSERT(ops_.size() == reductions_.size(), "GradientSync: finish() after ",
                     ops_.size(), " of ", reductions_.size(), " gradients");
    workspace_.check_replayed();
    const double scale = 1.0 / ex_.size(Axis::dp);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      ex_.wait(ops_[i]);
      if (scale != 1.0) ex_.scale(reduced_[i], scale);
    }
    ops_.clear();
    reduced_.clear();
  }

  // ZeRO-1's all-gathers of the updated parameters, in the order of the scattered gradients.
  void begin_gather() {
    MESHSLICE_ASSERT(gathers_.empty(), "GradientSync: begin_gather() before finish_gather()");
    gather_workspace_.replay();
    next_gather_ = 0;
  }
  // Starts gathering parameter `index` (viewed as dp rows of its gather_cols) from every
  // replica's row; `row` holds this replica's (a copy: it must not be part of `parameter`).
  void gather(std::size_t index, const Mat& row, const Mat& parameter) {
    while (next_gather_ < reductions_.size() && !reductions_[next_gather_].scatter) ++next_gather_;
    MESHSLICE_ASSERT(next_gather_ == index, "GradientSync: parameter ", index,
                     " gathered out of order");
    ++next_gather_;
    const AttachedWorkspace<Exec> attached(ex_, gather_workspace_);
    gathers_.push_back(ex_.start_all_gather(Axis::dp, row, parameter, MatrixDim::rows));
  }
  void finish_gather() {
    gather_workspace_.check_replayed();
    for (const auto& op : gathers_) ex_.wait(op);
    gathers_.clear();
  }

 private:
  static std::vector<DpReduction> all_reduced(const std::vector<MatrixShape>& shapes) {
    std::vector<DpReduction> r;
    for (const MatrixShape& s : shapes) r.push_back({s, false});
    return r;
  }

  Exec& ex_;
  std::vector<DpReduction> reductions_;
  typename Exec::Workspace workspace_, gather_workspace_;
  std::vector<typename Exec::OpId> ops_, gathers_;
  std::vector<Mat> reduced_;
  std::size_t next_gather_ = 0;
};

}  // namespace meshslice
