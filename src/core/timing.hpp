#pragma once
// Timing across ranks: a sample is the slowest rank's time for one run of an operation that all
// ranks start together after a barrier; repeated samples are summarized by median and minimum.
#include <mpi.h>

#include <algorithm>
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

template <class Op>
Timing time_op(const Op& op, int warmups, int repetitions, MPI_Comm comm = MPI_COMM_WORLD) {
  for (int i = 0; i < warmups; ++i) op();
  std::vector<double> samples;
  for (int i = 0; i < repetitions; ++i) samples.push_back(timed(comm, op));
  return {median(samples), *std::min_element(samples.begin(), samples.end())};
}

}  // namespace meshslice
