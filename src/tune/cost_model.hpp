#pragma once
// The MeshSlice autotuner's analytical cost model (paper §3.2.2), the coarse view the paper
// validates against its simulator in Figs. 13 and 14:
//   communication  cost_op = t_launch + (P-1) * (t_sync + sizeof(shard) / bw)
//   computation    flops / effective FLOP/s, measured on one chip (or per local GEMM shape)
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
#include <string>

#include "gemm/gemm_problem.hpp"
#include "hardware/model.hpp"

namespace meshslice::tune {

// The chip's effective FLOP/s on a large square benchmark GEMM (8192^3).
double effective_flops(const hw::MachineModel& machine);

// How the model times a local GEMM: at the chip's one effective FLOP/s (the paper's formula), or
// at the rate the chip gets on that GEMM's very shape, as profiling each local GEMM would give
// it (the machine description's chip model: thin slices fill the systolic arrays less well).
enum class GemmRate { effective, per_shape };
GemmRate parse_gemm_rate(const std::string& name);  // "effective", "per_shape"

class CostModel {
 public:
  // The machine's links and element size, and its chip's GEMM rate. `machine` must outlive the
  // model (its chip model times the per-shape GEMMs).
  explicit CostModel(const hw::MachineModel& machine, GemmRate rate = GemmRate::effective);

  // Estimated seconds of MeshSlice with S slices for `problem` on a rows x cols torus.
  double meshslice_seconds(const GemmProblem& problem, int rows, int cols, int slices) const;
  // Seconds of `flops` of local GEMM work at the effective rate.
  double compute_seconds(double flops) const { return flops / flop_rate_; }
  // Seconds of one local GEMM C (m x n) (+)= A (m x k) B (k x n).
  double gemm_seconds(double m, double n, double k, bool accumulate) const;
  // A ring all-reduce of `bytes` over `chips` (dp gradients), its two halves (ZeRO-1: `bytes`
  // is the whole buffer, each chip's shard bytes / chips) and one stage-to-stage transfer.
  double all_reduce_seconds(hw::Ring ring, int chips, double bytes) const;
  double reduce_scatter_seconds(hw::Ring ring, int chips, double bytes) const;
  double all_gather_seconds(hw::Ring ring, int chips, double bytes) const;
  double send_recv_seconds(hw::Ring ring, double bytes) const;

  double flop_rate() const { return flop_rate_; }
  const hw::Machine& machine() const { return machine_->machine; }
  double element_bytes() const { return machine_->machine.chip.element_bytes; }

 private:
  const hw::MachineModel* machine_;
  GemmRate rate_;
  double flop_rate_;  // effective_flops(), measured once
};

}  // namespace meshslice::tune
