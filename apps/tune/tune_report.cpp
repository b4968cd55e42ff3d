#include "tune_report.hpp"

#include <cstdio>

#include "core/csv.hpp"
#include "core/deck.hpp"
#include "model/layer_plan.hpp"
#include "gemm/vocab_padding.hpp"

namespace meshslice::tuneapp {

namespace {

double utilization(const tune::BlockTuning& t, double seconds, const hw::Machine& machine) {
  return sim::flop_utilization(t.flops, t.chips, seconds, machine);
}

std::string mesh_name(int rows, int cols) { return concat(rows, "x", cols); }

}  // namespace

void print_phase1(const TuneSettings& s, const std::vector<sim::FcGemm>& gemms) {
  std::printf(
      "\nPhase 1 (dataflow and sharding): %s, %s MLP of width %zu, T = %zu tokens (%zu sequences "
      "x %zu)\n",
      s.llm.label.c_str(), mlp_name(s.llm.mlp), s.llm.ffn_hidden(), s.tokens(), s.sequences,
      s.seq_len);
  std::printf("%-9s %-6s %-4s %-58s %s\n", "layer", "row", "tr", "sharding (dimension/mesh axis)",
              "GEMMs fwd | bwd_data | bwd_weight");
  for (std::size_t i = 0; i + 2 < gemms.size(); i += 3) {
    const sim::FcGemm& g = gemms[i];
    std::string flows;
    for (std::size_t p = i; p < i + 3; ++p)
      flows += concat(p == i ? "" : " | ", gemms[p].problem.str());
    std::printf("%-9s %-6s %-4s %-58s %s\n", g.layer.c_str(), stationary_name(g.stationary),
                g.transposed ? "yes" : "no",
                tune::layer_sharding(g.stationary, g.transposed).c_str(), flows.c_str());
  }
}

void print_phase2(const TuneSettings& s, const tune::BlockTuning& t, const hw::Machine& machine) {
  std::printf("\nPhase 2 (mesh shape and S per GEMM) on %d chips of %s, cost model\n", t.chips,
              machine.name.c_str());
  std::printf("%-9s %12s %8s  %s\n", "mesh", "block ms", "util",
              "S per GEMM (qkv, attn_out, ff1, "
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
              "attention %s\n",
              mesh_name(best.rows, best.cols).c_str(), best.seconds * 1e3,
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
  std::printf("%-9s %14s %14s %10s %10s %8s\n", "mesh", "predicted ms", "emulated ms", "pred util",
              "emu util", "error");
  for (const tune::MeshComparison& m : c.meshes)
    std::printf("%-9s %14.3f %14.3f %9.1f%% %9.1f%% %+7.1f%%\n", mesh_name(m.rows, m.cols).c_str(),
                m.predicted * 1e3, m.emulated * 1e3, 100 * utilization(t, m.predicted, machine),
                100 * utilization(t, m.emulated, machine), 100 * m.error());
  std::printf("mean absolute error %.1f%% over %zu meshes (the paper: 5.1%% against hardware)\n",
              100 * c.mean_absolute_error(), c.meshes.size());
  std::printf("tuner's choice %s: %.3f ms emulated; emulator's optimum %s (every mesh, every S "
              "per GEMM): %.3f ms; the choice is %.2f%% slower\n",
              mesh_name(c.tuned.rows, c.tuned.cols).c_str(), c.tuned.emulated * 1e3,
              mesh_name(c.optimum_rows, c.optimum_cols).c_str(), c.optimum * 1e3, 100 * c.gap());
}

void write_tune_csv(const std::string& path, const tune::BlockTuning& t,
                    const tune::EmulatorCheck* check) {
  CsvWriter csv(path, {"rows", "cols", "best", "layer", "pass", "dataflow", "M", "N", "K", "slices",
                       "predicted_seconds", "mesh_predicted_seconds", "mesh_emulated_seconds"});
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

void print_planner(const TuneSettings& s, const tune::PlanSearch& search, int chips,
                   const hw::Machine& machine) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  std::printf("\nJoint planner: %s, %zu blocks, %zu sequences x %zu tokens per step, on %d chips "
              "of %s with %.1f GiB each\n",
              s.llm.label.c_str(), s.blocks, s.sequences, s.seq_len, chips, machine.name.c_str(),
              s.planner.memory_bytes / gib);
  std::string rejected;
  for (const auto& [constraint, count] : search.rejected)
    rejected += concat(rejected.empty() ? "" : ", ", count, " ", constraint);
  std::printf("%zu configurations fit; rejected: %s; searched in %.3f s\n", search.feasible,
              rejected.empty() ? "none" : rejected.c_str(), search.seconds);
  std::printf("%-4s %-52s %10s %6s %9s %9s %9s %9s %8s  %s\n", "rank", "configuration", "step ms",
              "util", "compute", "bubble", "pp", "dp", "GiB", "why slower than #1");
  const tune::Candidate& best = search.best();
  for (std::size_t i = 0; i < search.ranked.size(); ++i) {
    const tune::Candidate& c = search.ranked[i];
    std::printf("%-4zu %-52s %10.2f %5.1f%% %9.2f %9.2f %9.2f %9.2f %8.2f  %s\n", i + 1,
                c.config.str().c_str(), c.step.total() * 1e3, 100 * c.flop_utilization,
                c.step.compute * 1e3, c.step.bubble * 1e3, c.step.pp_transfers * 1e3,
                c.step.dp_exposed * 1e3, c.memory.total() / gib,
                i == 0 ? "-" : tune::why_slower(c, best).c_str());
  }
  const tune::MemoryEstimate& m = best.memory;
  std::printf("best: %s, %.2f ms per step, %.1f%% FLOP utilization (FC layers); memory per chip "
              "%.2f GiB = weights %.2f + gradients %.2f + optimizer %.2f + activations %.2f + "
              "workspaces %.2f\n",
              best.config.str().c_str(), best.step.total() * 1e3, 100 * best.flop_utilization,
              m.total() / gib, m.weights / gib, m.gradients / gib, m.optimizer / gib,
              m.activations / gib, m.workspaces / gib);
}

void write_planner_csv(const std::string& path, const tune::PlanSearch& search) {
  CsvWriter csv(path, {"rank", "dp", "pp", "rows", "cols", "microbatches", "schedule",
                       "virtual_stages", "recompute", "zero", "step_seconds", "compute_seconds",
                       "bubble_seconds", "pp_seconds", "dp_exposed_seconds", "flop_utilization",
                       "memory_bytes", "why_slower"});
  const tune::Candidate& best = search.best();
  for (std::size_t i = 0; i < search.ranked.size(); ++i) {
    const tune::Candidate& k = search.ranked[i];
    const tune::TrainingConfig& c = k.config;
    csv.row(i + 1, c.dp, c.pp, c.rows, c.cols, c.microbatches, schedule_name(c.schedule),
            c.virtual_stages, c.checkpointing ? 1 : 0, c.zero ? 1 : 0, k.step.total(),
            k.step.compute, k.step.bubble, k.step.pp_transfers, k.step.dp_exposed,
            k.flop_utilization, k.memory.total(), i == 0 ? "-" : tune::why_slower(k, best));
  }
  csv.finish();
}

void print_calibration(const tune::Calibration& c, const hw::MachineModel& machine) {
  std::string sizes;
  for (int p : c.axis_sizes) sizes += concat(sizes.empty() ? "" : ", ", p);
  std::printf("\nCalibration of %s on %d ranks: rings of %s ranks, shards up to %zu KiB\n",
              machine.machine.name.c_str(), c.ranks, sizes.c_str(), c.max_bytes >> 10);
  std::printf("%-15s %12s %12s %12s %8s %10s %10s\n", "fit", "launch us", "sync us", "GB/s",
              "points", "mean err", "max err");
  const auto errors = tune::fit_errors(machine, c.comm, c.gemm);
  const auto error_of = [&errors](const std::string& what) {
    for (const tune::FitError& e : errors)
      if (e.what == what) return e;
    return tune::FitError{what};
  };
  for (const auto& [kind, op] : tune::calibrated_kinds()) {
    const hw::LinkParams& l = machine.machine.ici.link(kind, hw::Ring::dim1);
    const tune::FitError e = error_of(op);
    std::printf("%-15s %12.2f %12.2f %12.3f %8zu %9.1f%% %9.1f%%\n", op, l.launch_s * 1e6,
                l.sync_s * 1e6, l.bandwidth / 1e9, e.points, 100 * e.mean, 100 * e.max);
  }
  const tune::FitError b = error_of("broadcast"), g = error_of("gemm");
  std::printf("%-15s %38s %8zu %9.1f%% %9.1f%%\n", "broadcast", "(all_gather's constants)",
              b.points, 100 * b.mean, 100 * b.max);
  std::printf("%-15s %24.1f GFLOP/s peak %8zu %9.1f%% %9.1f%%\n", "gemm",
              machine.machine.chip.utilization_peak_flops / 1e9, g.points, 100 * g.mean,
              100 * g.max);
  std::printf(
      "memory: %.2f GB/s copy bandwidth per rank (all copying at once), %.1f GiB per rank\n",
      c.copy_bytes_per_second / 1e9, c.memory_bytes / (1024.0 * 1024.0 * 1024.0));
}

void write_calibration_csv(const std::string& path, const tune::Calibration& c,
                           const hw::MachineModel& machine) {
  CsvWriter csv(path, {"op", "ranks", "hops", "bytes", "m", "n", "k", "measured_seconds",
                       "predicted_seconds"});
  for (const tune::CommSample& s : c.comm)
    csv.row(s.op, s.ranks, s.hops, s.bytes, 0, 0, 0, s.seconds,
            tune::predicted_seconds(machine, s));
  for (const tune::GemmSample& g : c.gemm)
    csv.row("gemm", 1, 0, 0, g.m, g.n, g.k, g.seconds, tune::predicted_seconds(machine, g));
  csv.finish();
}

void print_lm_head(const TuneSettings& s, const tune::TrainingConfig& c, std::size_t tokens,
                   const tune::MeshChoice& head) {
  const std::size_t vocab = mesh_padded_vocab(s.vocab, static_cast<std::size_t>(c.rows),
                                              static_cast<std::size_t>(c.cols));
  require(head.usable(), kLmHeadName, " (", s.llm.hidden, " -> ", vocab, ", ", tokens,
          " tokens) on ", c.rows, "x", c.cols, ": ", head.unusable);
  std::string slices;
  for (const tune::TunedGemm& g : head.gemms) slices += concat(" ", g.gemm.pass, " S=", g.slices);
  std::printf("%s (%zu -> %zu, the vocabulary of %zu padded, %zu tokens per micro-batch): %s,%s; "
              "%.3g ms per micro-batch on the last stage\n",
              kLmHeadName, s.llm.hidden, vocab, s.vocab, tokens,
              stationary_name(head.gemms.front().gemm.stationary), slices.c_str(),
              1e3 * head.seconds);
}

void write_plan(const std::string& path, const TuneSettings& s, const tune::TrainingConfig& c,
                const tune::MeshChoice& mesh_choice, const tune::MeshChoice* head,
                const std::string& machine_name) {
  Teuchos::ParameterList plan("plan");
  const std::size_t per_replica = s.sequences / static_cast<std::size_t>(c.dp);
  plan.set("hidden", static_cast<int>(s.llm.hidden));
  plan.set("heads", s.llm.heads);
  plan.set("kv_heads", s.llm.kv_heads > 0 ? static_cast<int>(s.llm.kv_heads) : s.llm.heads);
  plan.set("mlp", std::string(mlp_name(s.llm.mlp)));
  plan.set("ffn", static_cast<int>(s.llm.ffn_hidden()));
  plan.set("tokens", static_cast<int>(per_replica * s.seq_len));
  plan.sublist("model").set("sequences", static_cast<int>(per_replica));
  auto& mesh = plan.sublist("mesh");
  mesh.set("dp", c.dp);
  mesh.set("pp", c.pp);
  mesh.set("rows", c.rows);
  mesh.set("cols", c.cols);
  auto& pipeline = plan.sublist("pipeline");
  pipeline.set("microbatches", static_cast<int>(c.microbatches));
  pipeline.set("schedule", std::string(schedule_name(c.schedule)));
  pipeline.set("virtual_stages", static_cast<int>(c.virtual_stages));
  if (c.checkpointing)
    plan.sublist("recompute").set("blocks", Teuchos::Array<std::string>(1, "all"));
  plan.sublist("optimizer").set("zero", c.zero);
  // Checked, not set: the memory estimate counted this optimizer's state.
  plan.sublist("optimizer").set("kind", std::string(optimizer_name(s.optimizer)));
  // Checked, not set: its GEMMs and messages were timed at this precision's element width.
  if (s.precision != "machine") plan.sublist("train").set("precision", s.precision);
  Teuchos::Array<std::string> layers;
  for (const tune::MeshChoice* choice : {&mesh_choice, head}) {
    const auto& gemms = choice ? choice->gemms : std::vector<tune::TunedGemm>{};
    for (std::size_t g = 0; g + 2 < gemms.size(); g += 3) {
      FcPlan layer;
      layer.stationary = gemms[g].gemm.stationary;
      layer.transposed = gemms[g].gemm.transposed;
      for (int p = 0; p < 3; ++p)
        layer.gemms[p] = {Algorithm::meshslice, sim::gemm_options(gemms[g + p].slices, s.search)};
      layers.push_back(plan_entry(gemms[g].gemm.layer, layer));
    }
  }
  plan.set("layers", layers);
  write_deck_yaml(path, plan,
                  concat("meshslice plan by meshslice-tune: ", s.llm.label, ", ", s.sequences,
                         " sequences x ", s.seq_len, " tokens per step on ", c.chips(),
                         " chips of ", machine_name, ": ", c.str(),
                         ".\nRun it: meshslice-train DECK --set plan=", path,
                         "\n(the plan sets the deck's mesh, pipeline, recomputation, ZeRO-1 and "
                         "sequences per replica; the deck's model must have these hidden, heads, "
                         "kv_heads, MLP and seq_len, and its optimizer.kind the one named here)"));
}

}  // namespace meshslice::tuneapp
