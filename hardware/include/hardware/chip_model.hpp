#pragma once
// Timing of work on one chip: local GEMMs on the systolic matrix units (MXUs) and local copies
// through HBM.
//
// A GEMM runs the way the MeshSlice paper's simulated TPU core runs it (paper §4.1): "The
// simulated TPU takes a GeMM (C=AB) request from the host and breaks it down into tiled
// sub-matrix multiplications. An output tile C_t is computed in a loop, where each iteration
// prefetches the input tiles A_t and B_t from HBM to the scratchpad memory, and computes
// C_t += A_t B_t. We apply software pipelining in that the prefetches overlap with the
// multiplications. Once the loop finishes, C_t is written back to the HBM memory and the core
// transitions to the next tile." So per tile and core:
//     first chunk's prefetch (+ C's old values when accumulating)     exposed
//     + per K chunk: max(multiply, next chunk's prefetch)               pipelined
//     + systolic fill/drain of the last pass + C's write-back           exposed
// and a core computes its share of the tiles one after another; HBM bandwidth is split evenly
// between the cores.
//
// The multiply: a weight-stationary MXU holds a mxu_rows x mxu_cols block of B and streams the
// tile's rows of A through it, one row per cycle. Loading the next block (one row per cycle) is
// double-buffered, so a pass costs max(tile rows, mxu_rows) cycles; a chunk's
// (tk/mxu_rows)*(tn/mxu_cols) blocks are spread over the core's MXUs. K and N are padded to the
// array size, M to the memory tile's sublane rows: the padding is computed but useless work.
// Skinny GEMMs (few rows to stream per weight block) are prefetch-bound: the HBM bound. Thin
// accumulating GEMMs (little K per output tile, as when MeshSlice OS slices K) pay C's round
// trip through HBM once per tile.
//
// The tile sizes are chosen per GEMM as a compiler would, statically, for the chip's full HBM
// bandwidth: the fastest (tm, tn, tk) among power-of-two multiples of the array size (and the
// whole padded extent) whose double-buffered input chunks and fp32 accumulators fit the core's
// scratchpad. K chunks stop at mxus_per_core * mxu_rows: that many weight blocks along K keep
// every MXU busy even for a single block column, and a longer chunk only lengthens the
// exposed first prefetch.
#include <cstddef>
#include <unordered_map>

#include "hardware/machine.hpp"

namespace meshslice::hw {

struct GemmTiming {
  double seconds = 0;  // wall time of the GEMM on the chip
  double flops = 0;    // useful flops, 2*m*n*k
  std::size_t tile_m = 0, tile_n = 0, tile_k = 0;
  bool hbm_bound = false;  // in the main tiles' steady loop the prefetch outlasts the multiply
};

class ChipModel {
 public:
  explicit ChipModel(const ChipParams& params) : p_(params) {}
  const ChipParams& params() const { return p_; }

  // C (m x n) = A (m x k) B (k x n), or C += A B when `accumulate` (C is read back first).
  // `hbm_bandwidth` is what the cores may use (less than the chip's when the NIC contends); the
  // tiles stay those planned for the full bandwidth. Operand transposes are free (the MXU loads
  // either orientation), so they are not parameters.
  GemmTiming gemm(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                  double hbm_bandwidth) const;
  GemmTiming gemm(std::size_t m, std::size_t n, std::size_t k, bool accumulate) const {
    return gemm(m, n, k, accumulate, p_.hbm_bandwidth);
  }

  // A local copy (slice, unslice, zeroing) streams through HBM: bytes read plus bytes written.
  double copy_seconds(double bytes_read, double bytes_written, double hbm_bandwidth) const {
    return (bytes_read + bytes_written) / hbm_bandwidth;
  }
  double copy_seconds(double bytes_read, double bytes_written) const {
    return copy_seconds(bytes_read, bytes_written, p_.hbm_bandwidth);
  }

  // What one output tile costs a core, by phase (public for the unit tests' hand computations).
  // tm, tn: the tile; kp: padded K; tk: the K chunk; core_bandwidth: HBM bytes/s for this core.
  struct TileCost {
    double first_prefetch = 0;  // the first chunk's A and B (and C's old values): exposed
    double loop = 0;            // the K chunks, each prefetch overlapping the previous multiply
    double fill_drain = 0;      // the systolic pipeline emptying after the last pass
    double write_back = 0;      // C to HBM: exposed
    double multiply = 0;        // of which MXU time (for the HBM-bound flag)
    double seconds() const { return first_prefetch + loop + fill_drain + write_back; }
  };
  TileCost tile_cost(std::size_t tm, std::size_t tn, std::size_t kp, std::size_t tk,
                     bool accumulate, double core_bandwidth) const;

 private:
  struct Tiles {
    std::size_t m = 0, n = 0, k = 0;
  };
  // The GEMM's time with the given tiles (plan() checks that they fit the scratchpad).
  GemmTiming evaluate(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                      double hbm_bandwidth, const Tiles& tiles) const;
  GemmTiming plan(std::size_t m, std::size_t n, std::size_t k, bool accumulate) const;

  struct Key {
    std::size_t m, n, k;
    bool accumulate;
    bool operator==(const Key& o) const {
      return m == o.m && n == o.n && k == o.k && accumulate == o.accumulate;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };

  ChipParams p_;
  // Sweeps time the same few shapes thousands of times; planning one takes ~10-50 us.
  // Not thread-safe: one ChipModel per thread.
  mutable std::unordered_map<Key, GemmTiming, KeyHash> plans_;
};

}  // namespace meshslice::hw
