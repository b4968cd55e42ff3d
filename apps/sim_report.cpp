#include "sim_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "core/csv.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/trace.hpp"
#include "sim/emulate.hpp"

namespace meshslice::simapp {

namespace {

// The per-GEMM slice counts of a configuration, in block order: "4;8;12;...".
std::string slices_of(const sim::Configuration& c) {
  std::string s;
  for (const auto& g : c.gemms) s += (s.empty() ? "" : ";") + std::to_string(g.slices);
  return s;
}

std::string mesh_of(int rows, int cols) { return concat(rows, "x", cols); }

}  // namespace

void print_tables(const SimResults& results, const SimSettings& s, const hw::Machine& machine) {
  for (const sim::LlmSpec* llm : s.models)
    for (sim::Scaling scaling : s.scalings) {
      std::printf("\n%s, %s scaling: FC-layer FLOP utilization at each algorithm's best mesh\n",
                  llm->label.c_str(), sim::scaling_name(scaling));
      std::printf("%6s", "chips");
      for (Algorithm a : s.algorithms)
        if (sim::evaluated(a, scaling)) std::printf(" %14s", algorithm_name(a));
      std::printf("\n");
      for (int chips : s.chips) {
        std::printf("%6d", chips);
        for (Algorithm a : s.algorithms) {
          if (!sim::evaluated(a, scaling)) continue;
          const Point* p = find_point(results, llm, scaling, chips, a);
          const sim::Configuration* c = p ? p->best_config() : nullptr;
          if (!c) {
            std::printf(" %14s", "-");
            continue;
          }
          std::printf(" %5.1f%% %-7s", c->flop_utilization(machine) * 100,
                      mesh_of(c->rows, c->cols).c_str());
        }
        std::printf("\n");
      }
      // Every algorithm left out somewhere, and why.
      for (const Point& p : results.points)
        if (p.llm == llm && p.scaling == scaling && !p.best_config())
          std::printf("left out: %s at %d chips: %s\n", algorithm_name(p.algorithm), p.chips,
                      p.left_out.c_str());
      // MeshSlice's speedup at the largest chip count, as the paper reports it at 256 chips.
      const int largest = s.chips.empty() ? 0 : *std::max_element(s.chips.begin(), s.chips.end());
      const Point* ms = find_point(results, llm, scaling, largest, Algorithm::meshslice);
      if (!ms || !ms->best_config()) continue;
      std::printf("MeshSlice speedup at %d chips:", largest);
      for (Algorithm a : s.algorithms) {
        const Point* p = find_point(results, llm, scaling, largest, a);
        if (a == Algorithm::meshslice || !p || !p->best_config()) continue;
        std::printf(" %s %+.1f%%", algorithm_name(a),
                    (p->best_config()->totals.seconds / ms->best_config()->totals.seconds - 1) * 100);
      }
      std::printf("\n");
    }
  std::fflush(stdout);
}

void write_csv_files(const SimResults& results, const SimSettings& s, const hw::Machine& machine,
                     const std::string& out_dir) {
  CsvWriter sim(out_dir + "/sim.csv",
                {"model", "scaling", "chips", "algorithm", "rows", "cols", "S", "seconds",
                 "flop_utilization", "compute_s", "launch_s", "transfer_s", "sync_s", "local_s",
                 "exposed_s", "tokens", "best"});
  CsvWriter gemms(out_dir + "/sim_gemms.csv",
                  {"model", "scaling", "chips", "algorithm", "rows", "cols", "layer", "pass",
                   "stationary", "transposed", "dataflow", "M", "N", "K", "S", "seconds",
                   "flop_utilization", "compute_s", "launch_s", "transfer_s", "sync_s"});
  for (const Point& p : results.points)
    for (std::size_t i = 0; i < p.meshes.size(); ++i) {
      const bool best = static_cast<int>(i) == p.best;
      if (!best && !s.all_meshes) continue;
      const sim::Configuration& c = p.meshes[i];
      const sim::SimTotals& t = c.totals;
      sim.row(p.llm->name, sim::scaling_name(p.scaling), p.chips, algorithm_name(p.algorithm),
              c.rows, c.cols, slices_of(c), t.seconds, c.flop_utilization(machine), t.compute,
              t.launch, t.transfer, t.sync, t.local, t.exposed(), p.tokens, best ? 1 : 0);
      if (!best) continue;
      for (const auto& g : c.gemms)
        gemms.row(p.llm->name, sim::scaling_name(p.scaling), p.chips, algorithm_name(p.algorithm),
                  c.rows, c.cols, g.gemm.layer, g.gemm.pass, sim::stationary_name(g.gemm.stationary),
                  g.gemm.transposed ? 1 : 0, dataflow_name(g.gemm.problem.flow), g.gemm.problem.M,
                  g.gemm.problem.N, g.gemm.problem.K, g.slices, g.totals.seconds,
                  sim::flop_utilization(g, p.chips, machine), g.totals.compute, g.totals.launch,
                  g.totals.transfer, g.totals.sync);
    }
  CsvWriter shapes(out_dir + "/sim_shapes.csv",
                   {"model", "chips", "rows", "cols", "flop_utilization",
                    "cost_model_flop_utilization", "tuner_flop_utilization"});
  for (const StudyRow& r : results.shapes)
    shapes.row(r.llm->name, r.rows * r.cols, r.rows, r.cols, r.emulated, r.cost_model, r.tuner);
  CsvWriter slices(out_dir + "/sim_slices.csv",
                   {"model", "rows", "cols", "S", "flop_utilization", "cost_model_flop_utilization",
                    "tuner_flop_utilization"});
  for (const StudyRow& r : results.slices)
    slices.row(r.llm->name, r.rows, r.cols, r.slices, r.emulated, r.cost_model, r.tuner);
  for (CsvWriter* csv : {&sim, &gemms, &shapes, &slices}) csv->finish();
}

void write_traces(const SimResults& results, const SimSettings& s, const hw::MachineModel& machine,
                  const std::string& out_dir) {
  if (s.trace_chips <= 0) return;
  for (const Point& p : results.points) {
    const sim::Configuration* c = p.best_config();
    if (p.chips != s.trace_chips || !c) continue;
    Trace trace;
    double offset = 0;
    for (const auto& g : c->gemms) {
      std::vector<TraceEvent> events;
      sim::emulate_gemm(machine, p.algorithm, g.gemm.problem, c->rows, c->cols,
                        sim::gemm_options(g.slices, s.sweep), &events);
      for (TraceEvent e : events) {
        e.name = g.gemm.label() + " " + e.name;
        e.start += offset;
        e.end += offset;
        trace.add(e);
      }
      offset += g.totals.seconds;
    }
    const std::string path =
        concat(out_dir, "/trace-", p.llm->name, "-", sim::scaling_name(p.scaling), "-", p.chips,
               "-", algorithm_name(p.algorithm), "-", mesh_of(c->rows, c->cols), ".json");
    std::string json = trace.chrome_events_json(0);
    if (json.size() >= 2) json.resize(json.size() - 2);  // drop the last ",\n"
    write_output_file(path, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" + json + "\n]}\n");
    log_info("trace: ", path);
  }
}

}  // namespace meshslice::simapp
