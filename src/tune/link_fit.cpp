#include "tune/link_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "core/errors.hpp"
#include "exec/collective_cost.hpp"

namespace meshslice::tune {

namespace {

int steps(const CommSample& s) { return s.op == "shift" ? s.hops : s.ranks - 1; }

// Least squares of sum over samples of ((x . coefficients) / t - 1)^2 for the features `use`
// picks among [1, steps, steps * bytes]; the unused coefficients are 0.
std::array<double, 3> solve(const std::vector<CommSample>& samples,
                            const std::array<bool, 3>& use) {
  std::vector<int> idx;
  for (int i = 0; i < 3; ++i)
    if (use[i]) idx.push_back(i);
  const std::size_t n = idx.size();
  std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
  for (const CommSample& s : samples) {
    const double x[3] = {1.0, double(steps(s)), steps(s) * s.bytes};
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < n; ++c)
        a[r][c] += x[idx[r]] * x[idx[c]] / (s.seconds * s.seconds);
      a[r][n] += x[idx[r]] / s.seconds;
    }
  }
  for (std::size_t col = 0; col < n; ++col) {  // Gaussian elimination with partial pivoting
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    require(std::abs(a[col][col]) > 0, "calibration: the measured times cannot be fitted");
    for (std::size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (std::size_t c = col; c <= n; ++c) a[r][c] -= f * a[col][c];
    }
  }
  std::array<double, 3> coefficients{};
  for (std::size_t r = 0; r < n; ++r) coefficients[idx[r]] = a[r][n] / a[r][r];
  return coefficients;
}

}  // namespace

hw::LinkParams fit_link(const std::vector<CommSample>& samples) {
  std::set<double> sizes;
  std::set<int> step_counts;
  for (const CommSample& s : samples) {
    sizes.insert(s.bytes);
    step_counts.insert(steps(s));
  }
  require(sizes.size() >= 2, "calibration: fitting needs at least two message sizes");
  // t_sync needs two step counts; a negative launch or sync (noise on few points) is dropped
  // and the rest refitted.
  std::array<bool, 3> use = {true, step_counts.size() >= 2, true};
  std::array<double, 3> c = solve(samples, use);
  for (int i : {1, 0})
    if (use[i] && c[i] < 0) {
      use[i] = false;
      c = solve(samples, use);
    }
  require(c[2] > 0, "calibration: the measured times do not grow with the message size; time "
                    "larger messages (calibrate.max_kib)");
  return hw::LinkParams{c[0], c[1], 1.0 / c[2]};
}

hw::ChipParams fit_chip(const std::vector<GemmSample>& gemms, double copy_bytes_per_second,
                        double memory_bytes, int element_bytes) {
  require(!gemms.empty(), "calibration: no GEMM was timed");
  double best = 0;
  for (const GemmSample& g : gemms) best = std::max(best, 2.0 * g.m * g.n * g.k / g.seconds);
  hw::ChipParams c;
  c.tensor_cores = 1;
  c.mxus_per_core = 1;
  c.mxu_rows = c.mxu_cols = 8;
  c.clock_hz = best / (2.0 * c.mxu_rows * c.mxu_cols);
  c.utilization_peak_flops = best;
  c.hbm_capacity_bytes = memory_bytes;
  c.hbm_bandwidth = 2 * copy_bytes_per_second;  // a copy reads and writes every byte
  c.scratchpad_bytes = 1024.0 * 1024.0;         // a core's share of cache the tiles stay in
  c.element_bytes = element_bytes;
  c.accumulator_bytes = element_bytes;
  c.sublane_rows = 1;
  return c;
}

double predicted_seconds(const hw::MachineModel& machine, const CommSample& s) {
  const hw::IciModel& ici = machine.ici;
  const hw::Ring ring = hw::Ring::dim1;  // a calibrated machine has one link set for all rings
  return collective_cost(ici, ring, parse_comm_kind(s.op, "calibration sample"), s.ranks, s.bytes,
                         s.hops)
      .total();
}

double predicted_seconds(const hw::MachineModel& machine, const GemmSample& g) {
  return machine.chip.gemm(g.m, g.n, g.k, false).seconds;
}

std::vector<FitError> fit_errors(const hw::MachineModel& machine,
                                 const std::vector<CommSample>& comm,
                                 const std::vector<GemmSample>& gemms) {
  std::vector<FitError> out;
  const auto add = [&out](const std::string& what, double predicted, double measured) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const FitError& e) { return e.what == what; });
    if (it == out.end()) it = out.insert(out.end(), FitError{what});
    const double error = std::abs(predicted / measured - 1);
    it->mean = (it->mean * it->points + error) / (it->points + 1);
    it->max = std::max(it->max, error);
    ++it->points;
  };
  for (const CommSample& s : comm) add(s.op, predicted_seconds(machine, s), s.seconds);
  for (const GemmSample& g : gemms) add("gemm", predicted_seconds(machine, g), g.seconds);
  return out;
}

}  // namespace meshslice::tune
