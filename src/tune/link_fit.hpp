#pragma once
// Calibration's fits (paper §4.5): the cost model's constants from measured times.
//   communication  t = t_launch + steps * (t_sync + bytes / bw), steps = ranks - 1 for a ring
//                  all-gather or reduce-scatter (bytes: one rank's shard), the hop count for a
//                  shift (bytes: the buffer) -- a least-squares fit in relative error over every
//                  size and axis size. With one step count among the samples t_sync cannot be
//                  told from t_launch: it is 0 and t_launch carries both.
//   computation    the chip's peak is the best local GEMM rate measured; its memory bandwidth
//                  is what a copy moves (read plus write) per second.
// The fit's error on each measured point is what the machine model (hw::IciModel, hw::ChipModel)
// predicts with the fitted constants against what was measured.
#include <cstddef>
#include <string>
#include <vector>

#include "hardware/model.hpp"

namespace meshslice::tune {

struct CommSample {
  std::string op;  // all_gather, reduce_scatter, shift, broadcast
  int ranks = 0;   // ring size
  int hops = 1;    // shift: ranks the buffer travels the shorter way round
  double bytes = 0;
  double seconds = 0;
};

struct GemmSample {
  std::size_t m = 0, n = 0, k = 0;
  double seconds = 0;
};

// Samples of one op (all_gather, reduce_scatter or shift) -> its link constants. UserError when
// there are too few samples to fit (fewer than two sizes).
hw::LinkParams fit_link(const std::vector<CommSample>& samples);

// A CPU rank as the chip model's terms: one core with one 8 x 8 "systolic array" whose clock
// makes its peak the best measured GEMM rate, memory bandwidth from the copy rate, and
// `memory_bytes` of memory.
hw::ChipParams fit_chip(const std::vector<GemmSample>& gemms, double copy_bytes_per_second,
                        double memory_bytes, int element_bytes);

// What the machine model predicts for a sample (broadcast has no constants of its own: it is
// predicted from the all-gather's, as SUMMA's model uses them).
double predicted_seconds(const hw::MachineModel& machine, const CommSample& sample);
double predicted_seconds(const hw::MachineModel& machine, const GemmSample& sample);

struct FitError {
  std::string what;  // "all_gather", ..., "gemm"
  std::size_t points = 0;
  double mean = 0;  // mean |predicted / measured - 1|
  double max = 0;
};

// The machine's predictions against the samples, per op and for the GEMMs.
std::vector<FitError> fit_errors(const hw::MachineModel& machine,
                                 const std::vector<CommSample>& comm,
                                 const std::vector<GemmSample>& gemms);

}  // namespace meshslice::tune
