#pragma once
// meshslice-tune's calibration (paper §4.5) on the MPI machine it runs on: all-gather,
// reduce-scatter, shift (send/recv) and broadcast timed on rings of every axis size the job's rank
// count allows (every ring of the job at once, as a GEMM runs them), over shard sizes from
// `min_bytes` doubling to a maximum bounded by the node's memory; local GEMMs on representative
// shapes and a copy on every rank at once. calibrated_machine() fits the machine description
// the tuner, the planner and meshslice-sim read (tune/link_fit.hpp).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "comm/comm_options.hpp"
#include "hardware/machine.hpp"
#include "tune/link_fit.hpp"

namespace meshslice::tune {

struct CalibrationOptions {
  std::size_t min_bytes = 8 << 10;
  std::size_t max_bytes = 64 << 20;  // lowered to what the node's memory holds
  int warmups = 1;
  int repetitions = 5;
  CommOptions comm;
  std::vector<std::array<std::size_t, 3>> gemm_shapes;  // m, n, k
};

struct Calibration {
  int ranks = 0;
  std::vector<int> axis_sizes;  // ring sizes timed
  std::size_t max_bytes = 0;    // largest shard timed
  std::vector<CommSample> comm;
  std::vector<GemmSample> gemm;
  double copy_bytes_per_second = 0;  // of one rank, all copying at once
  double memory_bytes = 0;           // per rank: the node's memory over its ranks
};

// The communication kinds a calibration fits, each with the timed op it is fitted to.
struct CalibratedKind {
  hw::CommKind kind;
  const char* op;  // CommSample::op
};
const std::array<CalibratedKind, 3>& calibrated_kinds();  // all_gather, reduce_scatter, shift

// Collective: every rank of MPI_COMM_WORLD calls it; every rank returns the same samples.
Calibration calibrate(const CalibrationOptions& options);

// The fitted description: one link set for every ring (a node's ranks share one memory system),
// measured whole-ring bandwidths (ring_directions 1), no NIC (nic_hbm_contention false).
hw::Machine calibrated_machine(const Calibration& calibration, const std::string& name);

}  // namespace meshslice::tune
