#pragma once
// The paper's evaluation (§5.1) as a search over emulated runs: for each algorithm, the FC
// GEMMs of a transformer block on every mesh shape the algorithm supports, each GEMM at its
// best slice count S, and the mesh shape with the shortest total ("for fairness, we compare
// the performance with optimal mesh shapes for each algorithm", §4.2).
//
// S per algorithm: MeshSlice's slice count; SUMMA's and Wang's unrolled loop iteration counts
// (§4.2); 1D TP's and FSDP's slice count of their (sliced) collectives. Every algorithm gets the
// S that is best for it on each GEMM, a choice that can only favour the baselines. S means
// nothing to Collective and Cannon, which run with S = 1.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/sim_executor.hpp"
#include "gemm/algorithm.hpp"
#include "hardware/model.hpp"
#include "sim/fc_layers.hpp"

namespace meshslice::sim {

struct SweepOptions {
  std::vector<int> slices = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};  // S candidates
  int block = 8;          // B of the blocked slicing: TPUs read 128x8 tiles (paper §3.1.2)
  int min_mesh_side = 2;  // 2D algorithms on meshes with at least this many rows and columns
  int rows = 0;           // only meshes with this many rows (0: any)
  // The rings Wang may decompose (gemm/wang.hpp), each GEMM taking the faster: the col ring
  // alone, as the MeshSlice authors' code and the paper's comparison, or both.
  std::vector<WangRing> wang_rings = {WangRing::col};
};

struct GemmResult {
  FcGemm gemm;
  int slices = 1;
  SimTotals totals;                    // of the representative chip
  WangRing wang_ring = WangRing::col;  // the ring Wang decomposed
};

struct Configuration {
  Algorithm algorithm = Algorithm::meshslice;
  int rows = 0;
  int cols = 0;
  std::vector<GemmResult> gemms;
  SimTotals totals;  // the GEMMs one after another: their sum
  double flops = 0;  // useful flops of the whole cluster

  int chips() const { return rows * cols; }
  double flop_utilization(const hw::Machine& machine) const;
};

// Useful `flops` done by `chips` chips in `seconds`, over their peak as the paper measures it
// (272 TFLOP/s per TPUv4, or the chip's own peak where higher: hw::ChipParams::utilization_flops).
double flop_utilization(double flops, int chips, double seconds, const hw::Machine& machine);

// FLOP utilization of one GEMM of a configuration.
double flop_utilization(const GemmResult& r, int chips, const hw::Machine& machine);

// The options of one run at S slices. One slice cuts nothing, so its block size is 1: a shard
// need not split into B-blocks to be gathered whole.
GemmOptions gemm_options(int slices, const SweepOptions& options,
                         WangRing wang_ring = WangRing::col);

// The S values worth trying for `algorithm` (see the header comment).
std::vector<int> slice_candidates(Algorithm algorithm, const SweepOptions& options);

// Mesh shapes (rows, cols) of `chips` chips for `algorithm`: every factorization with both
// sides >= min_mesh_side for the 2D algorithms, the square one for Cannon (none if `chips` is
// not a square or its side is below min_mesh_side), and the single ring 1 x chips for 1D TP
// and FSDP; with options.rows, only the
// meshes of that many rows.
std::vector<std::pair<int, int>> mesh_shapes(Algorithm algorithm, int chips,
                                             const SweepOptions& options);

// Every GEMM at its best S on one mesh; nullopt when some GEMM has no valid S there (shapes
// that do not split, S the algorithm rejects, or operands and buffers beyond the chip's HBM:
// SimTotals::memory_bytes against hbm_gib), with the reason in *why when given.
std::optional<Configuration> evaluate_mesh(const hw::MachineModel& machine, Algorithm algorithm,
                                           const std::vector<FcGemm>& gemms, int rows, int cols,
                                           const SweepOptions& options, std::string* why = nullptr);

// `algorithm` on one mesh with GEMM i at S = slices[i], or where the algorithm does not take
// that S there, at the largest S below it that it takes: the paper's Wang and SUMMA, whose loop
// iteration counts are "the slice count of MeshSlice given by our LLM autotuner" (§4.2).
std::optional<Configuration> evaluate_at_slices(const hw::MachineModel& machine,
                                                Algorithm algorithm,
                                                const std::vector<FcGemm>& gemms, int rows,
                                                int cols, const std::vector<int>& slices,
                                                const SweepOptions& options,
                                                std::string* why = nullptr);

// The best mesh shape for `algorithm` on `chips` chips; nullopt when none is valid, with the
// reason in *why when given.
std::optional<Configuration> best_configuration(const hw::MachineModel& machine,
                                                Algorithm algorithm,
                                                const std::vector<FcGemm>& gemms, int chips,
                                                const SweepOptions& options,
                                                std::string* why = nullptr);

// Why `algorithm` has no mesh shape of `chips` chips in the search ("" when it has some).
std::string no_mesh_reason(Algorithm algorithm, int chips, const SweepOptions& options);

// The paper's two scenarios (§5.1.1, §5.1.3): weak scaling grows the batch with the chips
// (batch = chips / 2, sequence 2048), strong scaling keeps batch 32.
enum class Scaling { weak, strong };
const char* scaling_name(Scaling scaling);  // "weak", "strong"

struct WorkloadOptions {
  double weak_batch_per_chip = 0.5;
  int strong_batch = 32;
  int sequence = 2048;
};

// Tokens T = batch * sequence of one training step on `chips` chips.
std::size_t tokens(Scaling scaling, int chips, const WorkloadOptions& workload);

// Whether the paper evaluates `algorithm` in this scenario: FSDP "cannot support strong
// scaling because DP assumes the batch size increases with the chip count" (§5.1.3).
bool evaluated(Algorithm algorithm, Scaling scaling);

}  // namespace meshslice::sim
