#pragma once
// Timing across ranks: a sample is the slowest rank's time for one run of an operation that all
// ranks start together after a barrier; repeated samples are summarized by median and minimum.
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace meshslice {

struct Timing {
  double median = 0;
  double min = 0;
};

// Seconds `op` takes on the slowest rank of `comm`, started together.
template <class Op>
double timed(MPI_Comm comm, const Op& op) {
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  op();
  double elapsed = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
  return elapsed;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Several operations timed interleaved: each repetition runs one of each in turn, so the drift
// of a shared, noisy machine falls on all of them alike and the ratios between them compare runs
// made moments apart, under the same cache and memory conditions.
inline std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& ops,
                                            int warmups, int repetitions,
                                            MPI_Comm comm = MPI_COMM_WORLD) {
  for (int i = 0; i < warmups; ++i)
    for (const auto& op : ops) op();
  std::vector<std::vector<double>> samples(ops.size());
  for (int i = 0; i < repetitions; ++i)
    for (std::size_t k = 0; k < ops.size(); ++k) samples[k].push_back(timed(comm, ops[k]));
  std::vector<Timing> timings;
  for (const auto& s : samples)
    timings.push_back({median(s), *std::min_element(s.begin(), s.end())});
  return timings;
}

template <class Op>
Timing time_op(const Op& op, int warmups, int repetitions, MPI_Comm comm = MPI_COMM_WORLD) {
  return time_interleaved({op}, warmups, repetitions, comm).front();
}

}  // namespace meshslice
