#pragma once
// The local GEMM rate a run's ideal step is held to (the step's dense GEMM FLOPs at every
// rank's rate). One timing at start-up is not enough on a shared machine: on the development
// VM it moved between 110 and 169 GFLOP/s a core within minutes, and in one run the step's own
// GEMMs ran 12 % above it, so the step came out at 0.98x its "ideal". The rate is taken instead
// as the best of three measures of what this chip did reach:
//   - the lone GEMM of the FC layers' shape timed at start-up (every rank timing each
//     repetition while the others time theirs: gemm/local_gemm_rate.hpp),
//   - the same timed again after the last step,
//   - the steps' own GEMMs: their FLOPs over the seconds spent inside BLAS, in the timed step
//     where that was highest.
// Each rank's best, then the best over ranks: the strictest ideal of them, never a laxer one
// than the start-up timing alone.
#include <mpi.h>

#include <algorithm>
#include <string>

#include "core/errors.hpp"  // concat
#include "core/kokkos_types.hpp"

namespace meshslice::train {

struct GemmRates {
  double start_up = 0, end = 0, in_step = 0;  // FLOP/s of one rank

  double best() const { return std::max({start_up, end, in_step}); }

  // A timed step whose GEMMs did `flops` in `seconds` inside BLAS. Only where each rank has
  // its own compute (a CPU's cores): ranks sharing one GPU take turns on it, so one rank's
  // GEMMs may run alone at the whole GPU's rate, which is not a rank's share.
  void add_step(double flops, double seconds) {
    if (kRunsOnHost && seconds > 0) in_step = std::max(in_step, flops / seconds);
  }

  // Every rank's measures become the best over ranks (collective).
  void agree(MPI_Comm comm) {
    double rates[3] = {start_up, end, in_step};
    MPI_Allreduce(MPI_IN_PLACE, rates, 3, MPI_DOUBLE, MPI_MAX, comm);
    start_up = rates[0];
    end = rates[1];
    in_step = rates[2];
  }

  std::string describe() const {
    return concat("the best of start-up ", start_up / 1e9, ", end ", end / 1e9,
                  in_step > 0 ? concat(" and the steps' own GEMMs ", in_step / 1e9) : std::string(),
                  " GFLOP/s");
  }
};

}  // namespace meshslice::train
