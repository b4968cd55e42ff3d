#pragma once
// Emulating one distributed GEMM: the algorithm's own code (run_gemm) on SimExecutor, with
// data-free shards of the shapes shard_region() gives each chip.
//
// Representative chips. MeshSlice, Collective, Wang, 1D TP and FSDP are symmetric: every chip
// runs the same ops on the same shapes at the same times, so chip (0, 0) stands for all. Two
// algorithms are not:
//  * Cannon skews row i of A by i chips and column j of B by j chips; once every ring has been
//    skewed, each systolic step is gated by the ring's slowest chip, so the GEMM is as slow as
//    the chip whose skew takes longest on both rings. A skew moves two half-blocks (the two
//    streams), both the shorter way round, so one after the other on one link direction, except
//    halfway round (i = q/2), where both ways are as short and the streams take one each, in
//    parallel: (q/2, q/2) moves the farthest, q/2 hops, (q/2 + 1, q/2 + 1) the most, two
//    half-blocks q/2 - 1 hops each. LS/RS also send partial sums home by i-1 (or j-1) chips,
//    farthest for i = q/2 + 1. Both chips are emulated and the slower one counts.
//  * SUMMA's panel owners pack their panel before broadcasting it; every chip owns the same
//    number of panels, so the packing work per chip is the same, only its moment differs.
//    Chip (0, 0), which owns the first panels, packs earliest and so stands for the worst.
// Each chip is emulated on its own: the emulator does not couple the chips' timelines, which
// is exact for the symmetric algorithms and, for Cannon, exact after the skew.
#include <utility>
#include <vector>

#include "core/trace.hpp"
#include "exec/sim_executor.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/gemm_problem.hpp"
#include "hardware/model.hpp"

namespace meshslice::sim {

struct EmulatedGemm {
  SimTotals totals;  // of the slowest representative chip
  int chip_row = 0;  // which chip that was
  int chip_col = 0;
};

// The chips whose timelines bound the GEMM's time (see above).
std::vector<std::pair<int, int>> representative_chips(Algorithm algorithm, int rows, int cols);

// Runs `algorithm` for `problem` on a rows x cols torus of `machine`'s chips. Invalid
// configurations (a mesh or S the algorithm rejects) throw the algorithm's UserError. With
// `events`, the slowest chip's ops are recorded there.
EmulatedGemm emulate_gemm(const hw::MachineModel& machine, Algorithm algorithm,
                          const GemmProblem& problem, int rows, int cols,
                          const GemmOptions& options, std::vector<TraceEvent>* events = nullptr);

}  // namespace meshslice::sim
