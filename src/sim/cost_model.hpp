#pragma once
// The MeshSlice autotuner's analytical cost model (paper §3.2.2), the coarse view the paper
// validates against its simulator in Figs. 13 and 14:
//   communication  cost_op = t_launch + (P-1) * (t_sync + sizeof(shard) / bw)
//   computation    flops / effective FLOP/s, measured on one chip
//   MeshSlice      prologue + (S-1) * steady-state + epilogue, each direction's collectives
//                  running in parallel with the other's and with the GEMM:
//     OS: prologue = max(AG_col, AG_row)      steady = max(AG_col, AG_row, GEMM)   epilogue = GEMM
//     LS: prologue = AG_row                   steady = max(AG_row, GEMM, RdS_col)  epilogue = GEMM + RdS_col
//     RS: prologue = AG_col                   steady = max(AG_col, GEMM, RdS_row)  epilogue = GEMM + RdS_row
// The communication terms use the same machine description as the emulator (its IciModel
// implements this very formula); the effective FLOP/s is the chip model's rate on one large
// benchmark GEMM, as the paper measures it by profiling "a few GeMM operations". What the
// model leaves out -- tile-level GEMM efficiency, HBM contention, the order of operations on a
// ring -- is what separates it from the emulation.
#include "gemm/gemm_problem.hpp"
#include "hardware/model.hpp"

namespace meshslice::sim {

// The chip's effective FLOP/s on a large square benchmark GEMM (8192^3).
double effective_flops(const hw::MachineModel& machine);

// Estimated seconds of MeshSlice with S slices for `problem` on a rows x cols torus.
double meshslice_cost_model(const hw::MachineModel& machine, const GemmProblem& problem,
                            int rows, int cols, int slices);

}  // namespace meshslice::sim
