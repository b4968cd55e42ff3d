#pragma once
// Results of meshslice-bench mode gemm and the report printed at the end of a run.
#include <string>
#include <vector>

#include "gemm/gemm_problem.hpp"

namespace meshslice::bench {

struct Result {
  std::string algorithm;
  Dataflow flow;
  GemmProblem problem;
  int slices = 1;
  double seconds = 0;      // median over repetitions
  double min_seconds = 0;  // fastest repetition
  double gflops = 0;
  double peak_gflops = 0;             // per chip, local GEMM alone
  double hidden = -1;                 // fraction of communication hidden (-1: not traced)
  double local_gemm_efficiency = -1;  // local peak time / time the algorithm spent in GEMMs
  // MeshSlice, S > 1: local peak time / the same GEMM as the S BLAS calls MeshSlice makes, timed
  // alone (-1: not measured); the ceiling of local_gemm_efficiency.
  double sliced_blas_efficiency = -1;
  double error = -1;
  double emulated_seconds = -1;  // combined mode: the same ops on the emulated machine
};

// Prints every result and, per dataflow and shape, MeshSlice's best S against the others as
// speed-up ratios measured in the same run.
void print_gemm_report(const std::vector<Result>& results, int rows, int cols);

}  // namespace meshslice::bench
