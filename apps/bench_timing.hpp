#pragma once
// Timing of collective operations across ranks: each sample is the slowest rank's time for one
// repetition (ranks start together after a barrier), summarized by the median and the minimum.
#include <mpi.h>

#include <algorithm>
#include <vector>

namespace meshslice::bench {

struct Timing {
  double median = 0;
  double min = 0;
};

template <class Op>
Timing time_op(const Op& op, int warmups, int repetitions, MPI_Comm comm = MPI_COMM_WORLD) {
  for (int i = 0; i < warmups; ++i) op();
  std::vector<double> samples;
  for (int i = 0; i < repetitions; ++i) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    op();
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
    samples.push_back(elapsed);
  }
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples.front()};
}

}  // namespace meshslice::bench
