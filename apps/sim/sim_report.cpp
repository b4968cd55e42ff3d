#include "sim_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "core/csv.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/trace.hpp"
#include "sim/emulate.hpp"

namespace meshslice::simapp {

namespace {

// The per-GEMM slice counts of a configuration, in block order: "4;8;12;...", with an r after
// those where Wang decomposed the row ring.
std::string slices_of(const sim::Configuration& c) {
  std::string s;
  for (const auto& g : c.gemms)
    s += (s.empty() ? "" : ";") + std::to_string(g.slices) +
         (g.wang_ring == WangRing::row ? "r" : "");
  return s;
}

std::string mesh_of(int rows, int cols) { return concat(rows, "x", cols); }

// How much longer `seconds` is than `reference`, in %: the speed-up of what took `reference`.
double speedup_percent(double seconds, double reference) { return (seconds / reference - 1) * 100; }

// The other algorithms' points at MeshSlice's workload `ms` that have a configuration, in the
// deck's order.
std::vector<const Point*> others(const SimResults& results, const SimSettings& s, const Point& ms) {
  std::vector<const Point*> points;
  for (Algorithm a : s.algorithms) {
    const Point* p = find_point(results, ms.llm, ms.scaling, ms.chips, a);
    if (a != Algorithm::meshslice && p && p->best_config()) points.push_back(p);
  }
  return points;
}

// MeshSlice's speed-ups with the block's non-FC work added to every algorithm's FC time.
void print_end_to_end(const SimResults& results, const SimSettings& s, const Point& ms) {
  if (!ms.non_fc.valid()) {
    std::printf("no end-to-end time: %s\n", ms.non_fc.why_not.c_str());
    return;
  }
  std::printf("End-to-end (FC + %.2f ms of non-FC work per chip, %.1f%% of MeshSlice's FC time):",
              ms.non_fc.seconds * 1e3, 100 * ms.non_fc.seconds / ms.best_config()->totals.seconds);
  for (const Point* p : others(results, s, ms))
    std::printf(" %s %+.1f%%", algorithm_name(p->algorithm),
                speedup_percent(p->end_to_end_seconds(), ms.end_to_end_seconds()));
  std::printf("\n");
}

// One more configuration of an algorithm against MeshSlice's best, FC and end to end.
void print_against_meshslice(const char* what, const sim::Configuration& c, const Point& ms,
                             const hw::Machine& machine) {
  std::printf("%s on %s: %.1f%%, MeshSlice speedup %+.1f%% FC, %+.1f%% end-to-end\n", what,
              mesh_of(c.rows, c.cols).c_str(), c.flop_utilization(machine) * 100,
              speedup_percent(c.totals.seconds, ms.best_config()->totals.seconds),
              speedup_percent(c.totals.seconds + ms.non_fc.seconds, ms.end_to_end_seconds()));
}

// Wang and SUMMA as the paper runs them (on MeshSlice's mesh at MeshSlice's S), and Wang with
// the ring it decomposes chosen per GEMM.
void print_variants(const SimResults& results, const SimSettings& s, const Point& ms,
                    const hw::Machine& machine) {
  for (Algorithm a : s.algorithms) {
    const Point* p = find_point(results, ms.llm, ms.scaling, ms.chips, a);
    if (p && p->at_meshslice_s)
      print_against_meshslice(
          concat(algorithm_name(a), " at MeshSlice's S (paper sec. 4.2)").c_str(),
          *p->at_meshslice_s, ms, machine);
    if (p && p->either_ring) {
      int row = 0;
      for (const auto& g : p->either_ring->gemms) row += g.wang_ring == WangRing::row;
      print_against_meshslice(concat(algorithm_name(a), " decomposing the col or the row ring (",
                                     row, " of ", p->either_ring->gemms.size(), " GEMMs row)")
                                  .c_str(),
                              *p->either_ring, ms, machine);
    }
  }
}

// Paper §5.1.4 / Fig. 11: MeshSlice's speed-up over every other algorithm GEMM by GEMM at the
// largest chip count of weak scaling, averaged over the FC GEMMs of every model's block (each
// algorithm at its best mesh, as in the tables). The paper averages its 16 distinct GEMMs.
void print_per_gemm_average(const SimResults& results, const SimSettings& s) {
  if (std::find(s.scalings.begin(), s.scalings.end(), sim::Scaling::weak) == s.scalings.end() ||
      s.chips.empty())
    return;
  const int largest = *std::max_element(s.chips.begin(), s.chips.end());
  std::printf("\nPer-GEMM MeshSlice speedup at %d chips, weak scaling, averaged over the FC GEMMs "
              "of every model\n(paper Fig. 11 at 256 chips: collective +27.8%%, wang +19.1%%), "
              "over (GEMMs):",
              largest);
  // Per algorithm, the sum of its per-GEMM speed-ups and their count. Every configuration
  // lists the same block's GEMMs in the same order (sim::block_gemms).
  std::map<Algorithm, std::pair<double, int>> average;
  for (const sim::LlmSpec* llm : s.models) {
    const Point* ms = find_point(results, llm, sim::Scaling::weak, largest, Algorithm::meshslice);
    if (!ms || !ms->best_config()) continue;
    const auto& mine = ms->best_config()->gemms;
    for (const Point* p : others(results, s, *ms)) {
      const auto& theirs = p->best_config()->gemms;
      auto& [sum, count] = average[p->algorithm];
      for (std::size_t i = 0; i < mine.size(); ++i, ++count)
        sum += speedup_percent(theirs[i].totals.seconds, mine[i].totals.seconds);
    }
  }
  for (Algorithm a : s.algorithms)
    if (average.count(a))
      std::printf(" %s %+.1f%% (%d)", algorithm_name(a), average[a].first / average[a].second,
                  average[a].second);
  std::printf("\n");
}

// Table 2: FLOP utilization without and with the dataflow optimization.
void print_dataflow_study(const SimResults& results, const hw::Machine& machine) {
  if (results.dataflows.empty()) return;
  std::printf("\nMeshSlice without and with the dataflow optimization (paper Table 2), weak "
              "scaling\n%-18s %6s %16s %16s %8s\n",
              "model", "chips", "all Y-stn", "tuned", "speedup");
  for (const DataflowRow& r : results.dataflows)
    std::printf("%-18s %6d %7.1f%% %-8s %7.1f%% %-8s %+7.1f%%\n", r.llm->label.c_str(), r.chips,
                r.y_stationary.flop_utilization(machine) * 100,
                mesh_of(r.y_stationary.rows, r.y_stationary.cols).c_str(),
                r.tuned.flop_utilization(machine) * 100,
                mesh_of(r.tuned.rows, r.tuned.cols).c_str(),
                speedup_percent(r.y_stationary.totals.seconds, r.tuned.totals.seconds));
}

}  // namespace

void print_tables(const SimResults& results, const SimSettings& s, const hw::Machine& machine) {
  for (const sim::LlmSpec* llm : s.models)
    for (sim::Scaling scaling : s.scalings) {
      std::printf("\n%s, %s scaling on %s: FC-layer FLOP utilization at each algorithm's best "
                  "mesh\n",
                  llm->label.c_str(), sim::scaling_name(scaling), machine.name.c_str());
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
      for (const Point* p : others(results, s, *ms))
        std::printf(" %s %+.1f%%", algorithm_name(p->algorithm),
                    speedup_percent(p->best_config()->totals.seconds,
                                    ms->best_config()->totals.seconds));
      std::printf("\n");
      print_end_to_end(results, s, *ms);
      print_variants(results, s, *ms, machine);
    }
  print_per_gemm_average(results, s);
  print_dataflow_study(results, machine);
  std::fflush(stdout);
}

void write_csv_files(const SimResults& results, const SimSettings& s, const hw::Machine& machine,
                     const std::string& out_dir) {
  CsvWriter sim(out_dir + "/sim.csv",
                {"model",    "scaling",    "chips",   "algorithm",        "rows",
                 "cols",     "S",          "seconds", "flop_utilization", "compute_s",
                 "launch_s", "transfer_s", "sync_s",  "local_s",          "exposed_s",
                 "tokens",   "best",       "variant", "non_fc_s",         "machine"});
  CsvWriter gemms(
      out_dir + "/sim_gemms.csv",
      {"model",     "scaling",  "chips",      "algorithm",  "rows",     "cols",
       "layer",     "pass",     "stationary", "transposed", "dataflow", "M",
       "N",         "K",        "S",          "wang_ring",  "seconds",  "flop_utilization",
       "compute_s", "launch_s", "transfer_s", "sync_s",     "machine"});
  auto sim_row = [&](const Point& p, const sim::Configuration& c, bool best, const char* variant) {
    const sim::SimTotals& t = c.totals;
    sim.row(p.llm->name, sim::scaling_name(p.scaling), p.chips, algorithm_name(p.algorithm), c.rows,
            c.cols, slices_of(c), t.seconds, c.flop_utilization(machine), t.compute, t.launch,
            t.transfer, t.sync, t.local, t.exposed(), p.tokens, best ? 1 : 0, variant,
            p.non_fc.seconds, machine.name);
  };
  for (const Point& p : results.points) {
    if (p.at_meshslice_s) sim_row(p, *p.at_meshslice_s, false, "meshslice_s");
    if (p.either_ring) sim_row(p, *p.either_ring, false, "either_ring");
    for (std::size_t i = 0; i < p.meshes.size(); ++i) {
      const bool best = static_cast<int>(i) == p.best;
      if (!best && !s.all_meshes) continue;
      const sim::Configuration& c = p.meshes[i];
      sim_row(p, c, best, "own_s");
      if (!best) continue;
      for (const auto& g : c.gemms)
        gemms.row(p.llm->name, sim::scaling_name(p.scaling), p.chips, algorithm_name(p.algorithm),
                  c.rows, c.cols, g.gemm.layer, g.gemm.pass,
                  sim::stationary_name(g.gemm.stationary), g.gemm.transposed ? 1 : 0,
                  dataflow_name(g.gemm.problem.flow), g.gemm.problem.M, g.gemm.problem.N,
                  g.gemm.problem.K, g.slices,
                  p.algorithm == Algorithm::wang ? wang_ring_name(g.wang_ring) : "-",
                  g.totals.seconds, sim::flop_utilization(g, p.chips, machine), g.totals.compute,
                  g.totals.launch, g.totals.transfer, g.totals.sync, machine.name);
    }
  }
  CsvWriter shapes(out_dir + "/sim_shapes.csv",
                   {"model", "chips", "rows", "cols", "flop_utilization",
                    "cost_model_flop_utilization", "tuner_flop_utilization", "machine"});
  for (const StudyRow& r : results.shapes)
    shapes.row(r.llm->name, r.rows * r.cols, r.rows, r.cols, r.emulated, r.cost_model, r.tuner,
               machine.name);
  CsvWriter slices(out_dir + "/sim_slices.csv",
                   {"model", "rows", "cols", "S", "flop_utilization", "cost_model_flop_utilization",
                    "tuner_flop_utilization", "machine"});
  for (const StudyRow& r : results.slices)
    slices.row(r.llm->name, r.rows, r.cols, r.slices, r.emulated, r.cost_model, r.tuner,
               machine.name);
  CsvWriter dataflows(out_dir + "/sim_dataflow.csv", {"model", "chips", "dataflows", "rows", "cols",
                                                      "seconds", "flop_utilization", "machine"});
  for (const DataflowRow& r : results.dataflows)
    for (const auto& [name, c] :
         {std::pair{"y_stationary", &r.y_stationary}, std::pair{"tuned", &r.tuned}})
      dataflows.row(r.llm->name, r.chips, name, c->rows, c->cols, c->totals.seconds,
                    c->flop_utilization(machine), machine.name);
  for (CsvWriter* csv : {&sim, &gemms, &shapes, &slices, &dataflows}) csv->finish();
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
                        sim::gemm_options(g.slices, s.sweep, g.wang_ring), &events);
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
    // otherData: trace viewers show it as the trace's metadata.
    write_output_file(path, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"machine\":" +
                                json::Value(machine.machine.name).dump() + "},\"traceEvents\":[\n" +
                                json + "\n]}\n");
    log_info("trace: ", path);
  }
}

}  // namespace meshslice::simapp
