#include "tune_report.hpp"

#include <cstdio>

#include "core/csv.hpp"
#include "core/deck.hpp"
#include "model/layer_plan.hpp"

namespace meshslice::tuneapp {

namespace {

double utilization(const tune::BlockTuning& t, double seconds, const hw::Machine& machine) {
  return t.flops / (t.chips * machine.chip.utilization_peak_flops * seconds);
}

std::string mesh_name(int rows, int cols) { return concat(rows, "x", cols); }

}  // namespace

void print_phase1(const TuneSettings& s, const std::vector<sim::FcGemm>& gemms) {
  std::printf("\nPhase 1 (dataflow and sharding): %s, T = %zu tokens (%zu sequences x %zu)\n",
              s.llm.label.c_str(), s.tokens(), s.sequences, s.seq_len);
  std::printf("%-9s %-6s %-4s %-58s %s\n", "layer", "row", "tr", "sharding (dimension/mesh axis)",
              "GEMMs fwd | bwd_data | bwd_weight");
  for (std::size_t i = 0; i + 2 < gemms.size(); i += 3) {
    const sim::FcGemm& g = gemms[i];
    std::string flows;
    for (std::size_t p = i; p < i + 3; ++p)
      flows += concat(p == i ? "" : " | ", gemms[p].problem.str());
    std::printf("%-9s %-6s %-4s %-58s %s\n", g.layer.c_str(), stationary_name(g.stationary),
                g.transposed ? "yes" : "no", tune::layer_sharding(g.stationary, g.transposed).c_str(),
                flows.c_str());
  }
}

void print_phase2(const TuneSettings& s, const tune::BlockTuning& t, const hw::Machine& machine) {
  std::printf("\nPhase 2 (mesh shape and S per GEMM) on %d chips of %s, cost model\n", t.chips,
              machine.name.c_str());
  std::printf("%-9s %12s %8s  %s\n", "mesh", "block ms", "util", "S per GEMM (qkv, attn_out, ff1, "
              "ff2; fwd/bwd_data/bwd_weight)");
  for (std::size_t m = 0; m < t.meshes.size(); ++m) {
    const tune::MeshChoice& mesh = t.meshes[m];
    const std::string name =
        concat(mesh_name(mesh.rows, mesh.cols), static_cast<int>(m) == t.best ? " *" : "");
    if (!mesh.usable()) {
      std::printf("%-9s %12s %8s  unusable: %s\n", name.c_str(), "-", "-", mesh.unusable.c_str());
      continue;
    }
    std::string slices;
    for (std::size_t g = 0; g < mesh.gemms.size(); ++g)
      slices += concat(g == 0 ? "" : g % 3 == 0 ? ", " : "/", mesh.gemms[g].slices);
    std::printf("%-9s %12.3f %7.1f%%  %s\n", name.c_str(), mesh.seconds * 1e3,
                100 * utilization(t, mesh.seconds, machine), slices.c_str());
  }
  const tune::MeshChoice& best = t.best_mesh();
  std::printf("best: %s, %.3f ms per block (fwd + bwd FC GEMMs), %.1f%% FLOP utilization; "
              "attention %s\n", mesh_name(best.rows, best.cols).c_str(), best.seconds * 1e3,
              100 * utilization(t, best.seconds, machine),
              s.attention == sim::AttentionLayout::standard ? "in the standard layout"
                                                            : "following QKV's layout");
  for (const tune::TunedGemm& g : best.gemms)
    std::printf("  %-20s %-26s S=%-3d %9.3f ms\n", g.gemm.label().c_str(),
                g.gemm.problem.str().c_str(), g.slices, g.seconds * 1e3);
}

void print_validation(const tune::EmulatorCheck& c, const tune::BlockTuning& t,
                      const hw::Machine& machine) {
  std::printf("\nCost model vs emulator (the tuner's S per GEMM on each mesh)\n");
  std::printf("%-9s %14s %14s %10s %10s %8s\n", "mesh", "predicted ms", "emulated ms",
              "pred util", "emu util", "error");
  for (const tune::MeshComparison& m : c.meshes)
    std::printf("%-9s %14.3f %14.3f %9.1f%% %9.1f%% %+7.1f%%\n",
                mesh_name(m.rows, m.cols).c_str(), m.predicted * 1e3, m.emulated * 1e3,
                100 * utilization(t, m.predicted, machine), 100 * utilization(t, m.emulated, machine),
                100 * m.error());
  std::printf("mean absolute error %.1f%% over %zu meshes (the paper: 5.1%% against hardware)\n",
              100 * c.mean_absolute_error(), c.meshes.size());
  std::printf("tuner's choice %s: %.3f ms emulated; emulator's optimum %s (every mesh, every S "
              "per GEMM): %.3f ms; the choice is %.2f%% slower\n",
              mesh_name(c.tuned.rows, c.tuned.cols).c_str(), c.tuned.emulated * 1e3,
              mesh_name(c.optimum_rows, c.optimum_cols).c_str(), c.optimum * 1e3, 100 * c.gap());
}

void write_tune_csv(const std::string& path, const tune::BlockTuning& t,
                    const tune::EmulatorCheck* check) {
  CsvWriter csv(path, {"rows", "cols", "best", "layer", "pass", "dataflow", "M", "N", "K",
                       "slices", "predicted_seconds", "mesh_predicted_seconds",
                       "mesh_emulated_seconds"});
  for (std::size_t m = 0; m < t.meshes.size(); ++m) {
    const tune::MeshChoice& mesh = t.meshes[m];
    double emulated = -1;  // -1: not emulated
    if (check)
      for (const tune::MeshComparison& c : check->meshes)
        if (c.rows == mesh.rows && c.cols == mesh.cols) emulated = c.emulated;
    for (const tune::TunedGemm& g : mesh.gemms)
      csv.row(mesh.rows, mesh.cols, static_cast<int>(m) == t.best ? 1 : 0, g.gemm.layer,
              g.gemm.pass, dataflow_name(g.gemm.problem.flow), g.gemm.problem.M, g.gemm.problem.N,
              g.gemm.problem.K, g.slices, g.seconds, mesh.seconds, emulated);
  }
  csv.finish();
}

void write_plan(const std::string& path, const TuneSettings& s, const tune::BlockTuning& t,
                const std::string& machine_name) {
  const tune::MeshChoice& best = t.best_mesh();
  Teuchos::ParameterList plan("plan");
  plan.set("hidden", static_cast<int>(s.llm.hidden));
  plan.set("heads", s.llm.heads);
  plan.set("tokens", static_cast<int>(s.tokens()));
  auto& mesh = plan.sublist("mesh");
  mesh.set("dp", 1);
  mesh.set("pp", 1);
  mesh.set("rows", best.rows);
  mesh.set("cols", best.cols);
  Teuchos::Array<std::string> layers;
  for (std::size_t g = 0; g + 2 < best.gemms.size(); g += 3) {
    FcPlan layer;
    layer.stationary = best.gemms[g].gemm.stationary;
    layer.transposed = best.gemms[g].gemm.transposed;
    for (int p = 0; p < 3; ++p) {
      const int S = best.gemms[g + p].slices;
      layer.gemms[p] = {Algorithm::meshslice, sim::gemm_options(S, s.search)};
    }
    layers.push_back(plan_entry(parse_fc_kind(best.gemms[g].gemm.layer), layer));
  }
  plan.set("layers", layers);
  write_deck_yaml(path, plan,
                  concat("meshslice plan by meshslice-tune: ", s.llm.label, ", ", s.sequences,
                         " sequences x ", s.seq_len, " tokens on ", t.chips, " chips of ",
                         machine_name, ".\nRun it: meshslice-train DECK --set plan.source=file "
                         "--set plan.file=", path, "\n(the plan sets the deck's mesh; the deck's "
                         "model must have these hidden, heads and tokens)"));
}

}  // namespace meshslice::tuneapp
