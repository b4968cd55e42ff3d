#include "tune/cost_model.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace meshslice::tune {

double effective_flops(const hw::MachineModel& machine) {
  const hw::GemmTiming t = machine.chip.gemm(8192, 8192, 8192, false);
  return t.flops / t.seconds;
}

GemmRate parse_gemm_rate(const std::string& name) {
  if (name == "effective") return GemmRate::effective;
  if (name == "per_shape") return GemmRate::per_shape;
  throw UserError(concat("unknown GEMM rate '", name, "'; valid: effective, per_shape"));
}

CostModel::CostModel(const hw::MachineModel& machine, GemmRate rate)
    : machine_(&machine), rate_(rate), flop_rate_(effective_flops(machine)) {}

double CostModel::gemm_seconds(double m, double n, double k, bool accumulate) const {
  if (rate_ == GemmRate::effective) return compute_seconds(2 * m * n * k);
  const auto whole = [](double x) { return static_cast<std::size_t>(x); };
  return machine_->chip.gemm(whole(m), whole(n), whole(k), accumulate).seconds;
}

double CostModel::meshslice_seconds(const GemmProblem& p, int rows, int cols, int slices) const {
  const double e = element_bytes(), S = slices;
  const hw::IciModel& ici = machine_->ici;
  const double r = rows, c = cols;
  // One slice's local GEMM (meshslice.hpp): OS accumulates C += A_s B_s over K/S; LS computes
  // a partial C of N/S columns, RS one of M/S rows.
  const double gemm = p.flow == Dataflow::OS   ? gemm_seconds(p.M / r, p.N / c, p.K / S, S > 1)
                      : p.flow == Dataflow::LS ? gemm_seconds(p.M / r, p.N / S, p.K / c, false)
                                               : gemm_seconds(p.M / S, p.N / c, p.K / r, false);
  // Sub-shard bytes of each collective (shapes as in gemm_problem.hpp and meshslice.hpp).
  switch (p.flow) {
    case Dataflow::OS: {
      const double ag_col =
          ici.all_gather(hw::Ring::dim1, cols, p.M / r * (p.K / c) / S * e).total();
      const double ag_row =
          ici.all_gather(hw::Ring::dim0, rows, p.K / r * (p.N / c) / S * e).total();
      const double prologue = std::max(ag_col, ag_row);
      return prologue + (S - 1) * std::max(prologue, gemm) + gemm;
    }
    case Dataflow::LS: {
      const double ag_row =
          ici.all_gather(hw::Ring::dim0, rows, p.N / r * (p.K / c) / S * e).total();
      const double rds_col =
          ici.reduce_scatter(hw::Ring::dim1, cols, p.M / r * (p.N / S) / c * e).total();
      return ag_row + (S - 1) * std::max({ag_row, gemm, rds_col}) + gemm + rds_col;
    }
    case Dataflow::RS: {
      const double ag_col =
          ici.all_gather(hw::Ring::dim1, cols, p.K / r * (p.M / c) / S * e).total();
      const double rds_row =
          ici.reduce_scatter(hw::Ring::dim0, rows, p.M / S * (p.N / c) / r * e).total();
      return ag_col + (S - 1) * std::max({ag_col, gemm, rds_row}) + gemm + rds_row;
    }
  }
  return 0;
}

double CostModel::all_reduce_seconds(hw::Ring ring, int chips, double bytes) const {
  return machine_->ici.all_reduce(ring, chips, bytes).total();
}

double CostModel::reduce_scatter_seconds(hw::Ring ring, int chips, double bytes) const {
  return machine_->ici.reduce_scatter(ring, chips, bytes / chips).total();
}

double CostModel::all_gather_seconds(hw::Ring ring, int chips, double bytes) const {
  return machine_->ici.all_gather(ring, chips, bytes / chips).total();
}

double CostModel::send_recv_seconds(hw::Ring ring, double bytes) const {
  return machine_->ici.send_recv(ring, bytes).total();
}

}  // namespace meshslice::tune
