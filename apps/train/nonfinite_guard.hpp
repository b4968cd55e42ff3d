#pragma once
// train.on_nonfinite: what meshslice-train does with a step whose loss or global gradient norm
// is NaN or infinite. The trainer has not applied that step's update (model/trainer.hpp), so the
// parameters, the optimizer state and the last checkpoint are those of the last good step.
//   stop (default): end the run with one error naming the step, the values and the first
//     parameter whose gradient is not finite; no checkpoint of the bad state is written.
//   skip: drop the step's update, say so in the progress line and train.csv, and stop after
//     train.max_skipped such steps in a row.
#include <cmath>
#include <cstddef>
#include <string>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "model/trainer.hpp"
#include "train_settings.hpp"

namespace meshslice::train {

class NonfiniteGuard {
 public:
  explicit NonfiniteGuard(const Settings& s) : skip_(s.skip_nonfinite), limit_(s.max_skipped) {}

  // After step `step` (collective when its update was skipped: every rank saw the same
  // non-finite values, which are reduced over the job).
  template <class Exec>
  void after(std::size_t step, const typename Trainer<Exec>::StepResult& r,
             Trainer<Exec>& trainer) {
    if (!r.nonfinite) {
      in_a_row_ = 0;
      return;
    }
    const std::string first = trainer.student().first_nonfinite_gradient();
    const std::string what = concat(
        "step ", step, ": the loss is ", r.loss, " and the gradient norm ", r.grad_norm,
        first.empty() ? std::string("; every gradient is finite")
                      : concat("; the first parameter with a non-finite gradient is ", first));
    ++skipped_;
    if (skip_ && ++in_a_row_ <= limit_) {
      log_info(what, ": update skipped (", in_a_row_, " in a row, train.max_skipped = ", limit_,
               ")");
      return;
    }
    throw UserError(concat(
        what,
        skip_ ? concat("; ", in_a_row_,
                       " steps in a row had no finite update "
                       "(train.max_skipped = ",
                       limit_, ")")
              : std::string(),
        ". The run stopped without applying it: the parameters and the optimizer state are the "
        "last good step's and no checkpoint of this state was written (the newest one, if any, "
        "resumes with --resume auto). Lower optimizer.lr or lengthen optimizer.warmup_steps",
        skip_ ? "" : ", or set train.on_nonfinite = skip to drop such steps"));
  }

  std::size_t skipped() const { return skipped_; }

 private:
  bool skip_;
  std::size_t limit_;
  std::size_t in_a_row_ = 0, skipped_ = 0;
};

}  // namespace meshslice::train
