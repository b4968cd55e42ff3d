#include "sim/cost_model.hpp"

#include <algorithm>

namespace meshslice::sim {

double effective_flops(const hw::MachineModel& machine) {
  const hw::GemmTiming t = machine.chip.gemm(8192, 8192, 8192, false);
  return t.flops / t.seconds;
}

double meshslice_cost_model(const hw::MachineModel& machine, const GemmProblem& p, int rows,
                            int cols, int slices) {
  const double e = machine.machine.chip.element_bytes, S = slices;
  const double r = rows, c = cols;
  const double gemm = 2.0 * p.M * p.N * p.K / (r * c) / S / effective_flops(machine);
  const hw::IciModel& ici = machine.ici;
  // Sub-shard bytes of each collective (shapes as in gemm_problem.hpp and meshslice.hpp).
  switch (p.flow) {
    case Dataflow::OS: {
      const double ag_col = ici.all_gather(hw::Ring::dim1, cols, p.M / r * (p.K / c) / S * e).total();
      const double ag_row = ici.all_gather(hw::Ring::dim0, rows, p.K / r * (p.N / c) / S * e).total();
      const double prologue = std::max(ag_col, ag_row);
      return prologue + (S - 1) * std::max(prologue, gemm) + gemm;
    }
    case Dataflow::LS: {
      const double ag_row = ici.all_gather(hw::Ring::dim0, rows, p.N / r * (p.K / c) / S * e).total();
      const double rds_col =
          ici.reduce_scatter(hw::Ring::dim1, cols, p.M / r * (p.N / S) / c * e).total();
      return ag_row + (S - 1) * std::max({ag_row, gemm, rds_col}) + gemm + rds_col;
    }
    case Dataflow::RS: {
      const double ag_col = ici.all_gather(hw::Ring::dim1, cols, p.K / r * (p.M / c) / S * e).total();
      const double rds_row =
          ici.reduce_scatter(hw::Ring::dim0, rows, p.M / S * (p.N / c) / r * e).total();
      return ag_col + (S - 1) * std::max({ag_col, gemm, rds_row}) + gemm + rds_row;
    }
  }
  return 0;
}

}  // namespace meshslice::sim
