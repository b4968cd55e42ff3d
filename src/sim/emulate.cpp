#include "sim/emulate.hpp"

#include "gemm/run_gemm.hpp"

namespace meshslice::sim {

std::vector<std::pair<int, int>> representative_chips(Algorithm algorithm, int rows, int cols) {
  if (algorithm == Algorithm::cannon && rows == cols) {
    const int q = rows, far = q / 2, home = (q / 2 + 1) % q;
    if (far == home) return {{far, far}};
    return {{far, far}, {home, home}};
  }
  return {{0, 0}};
}

namespace {

SimTotals run_on_chip(const hw::MachineModel& machine, Algorithm algorithm, const GemmProblem& p,
                      int rows, int cols, int i, int j, const GemmOptions& options,
                      std::vector<TraceEvent>* events) {
  SimExecutor ex(machine, rows, cols, i, j, events);
  auto shard = [&](char matrix) {
    const ShardRegion r = shard_region(algorithm, p, matrix, rows, cols, i, j);
    return ex.alloc(r.rows, r.cols, "shard");
  };
  const SimMat a = shard('A'), b = shard('B'), c = shard('C');
  run_gemm(ex, algorithm, p, a, b, c, options);
  ex.wait_all();
  return ex.totals();
}

}  // namespace

EmulatedGemm emulate_gemm(const hw::MachineModel& machine, Algorithm algorithm,
                          const GemmProblem& problem, int rows, int cols,
                          const GemmOptions& options, std::vector<TraceEvent>* events) {
  EmulatedGemm worst;
  bool first = true;
  const auto chips = representative_chips(algorithm, rows, cols);
  for (const auto& [i, j] : chips) {
    // Record events in a single pass when there is only one candidate.
    const SimTotals t = run_on_chip(machine, algorithm, problem, rows, cols, i, j, options,
                                    chips.size() == 1 ? events : nullptr);
    if (first || t.seconds > worst.totals.seconds) worst = {t, i, j};
    first = false;
  }
  if (events && chips.size() > 1)
    run_on_chip(machine, algorithm, problem, rows, cols, worst.chip_row, worst.chip_col, options,
                events);
  return worst;
}

}  // namespace meshslice::sim
