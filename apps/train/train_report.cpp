#include "train_report.hpp"

#include <string>

#include "core/log.hpp"

namespace meshslice::train {

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

void print_plan(const Settings& s, const ModelPlan& plan) {
  log_info("model: ", s.model.blocks, " blocks, H = ", s.model.hidden, ", ", s.model.heads,
           " heads", s.model.rope ? " (RoPE)" : "", ", ", s.model.sequences, " sequences x ",
           s.model.seq_len, " tokens per replica (T = ", s.model.tokens(), "); mesh ", s.mesh.str(),
           "; ", optimizer_name(s.optimizer.kind), ", ", s.precision);
  if (!s.plan_applied.empty()) log_info("plan file ", s.plan_file, " sets ", s.plan_applied);
  const auto print = [](const std::string& layer, std::size_t in, std::size_t out,
                        const FcPlan& p) {
    log_info("  ", layer, " (", in, " -> ", out, "): ", p.str(), "; input ", layout_name(p.input()),
             ", output ", layout_name(p.output()), ", weight kept as ",
             p.weight_transposed() ? "W^T" : "W");
  };
  for (const BlockFcLayer& layer : block_fc_layers(s.model.dims()))
    print(layer.name, layer.in, layer.out, plan[layer.kind]);
  if (plan.lm_head) print(kLmHeadName, s.model.hidden, s.model.vocab, *plan.lm_head);
  log_info("  attention: ", attention_kernel_name(plan.attention), " kernels");
}

void print_pipeline(const Settings& s, const StageSplit& split) {
  const StepSettings& step = s.step;
  if (s.mesh.pp == 1 && step.micro_batches == 1 && step.checkpointed.empty() && !step.zero) return;
  const std::size_t p = static_cast<std::size_t>(s.mesh.pp), m = step.micro_batches;
  log_info("pipeline: ", p, " stage(s) x ", step.virtual_stages, " chunk(s), ",
           schedule_name(step.schedule), ", ", m, " micro-batch(es) of ", s.model.sequences / m,
           " sequences; ", split.str(), ", slowest / mean ", split.slowest() / split.mean(),
           "; ideal bubble (p - 1) / (v m + p - 1) = ",
           100.0 * (p - 1) / (step.virtual_stages * m + p - 1), "%");
  if (step.zero)
    log_info("ZeRO-1: optimizer state sharded over the ", s.mesh.dp,
             s.precision == "bf16" ? " replicas, and the fp32 master weights of the weights read "
                                     "through their bf16 copies (gradients reduce-scattered, "
                                     "the copies all-gathered in bf16 after the update)"
                                   : " replicas (gradients reduce-scattered, parameters "
                                     "all-gathered after the update)");
  if (!step.checkpointed.empty()) {
    std::string blocks;
    for (const std::size_t b : step.checkpointed) blocks += concat(blocks.empty() ? "" : " ", b);
    log_info("activation checkpointing: blocks ", blocks,
             " recompute their activations in the "
             "backward pass");
  }
}

void print_memory(const MemoryUse& m) {
  log_info("memory per rank (model buffers): ", mib(m.total()), " MiB = parameters ",
           mib(m.parameters), " + gradients ", mib(m.gradients), " + optimizer state ",
           mib(m.optimizer_state), " + saved activations ", mib(m.activations), " + work ",
           mib(m.work), " + workspaces ", mib(m.workspaces),
           " (GEMM plans, re-layouts, dp averaging, staged pipeline messages; the runtime comes "
           "on top)");
}

}  // namespace meshslice::train
