#include "tune/step_estimate.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/precision.hpp"
#include "block/block_fc_layers.hpp"
#include "block/block_module.hpp"
#include "gemm/vocab_padding.hpp"

namespace meshslice::tune {

namespace {

constexpr double kOptimizerStateBytes = 4;  // an element of optimizer state, fp32

double block_weights(const TrainingModel& m) { return block_fc_weights(m.llm.dims()); }

double block_parameters(const TrainingModel& m) {
  return block_weights(m) + 2 * static_cast<double>(m.llm.hidden);  // and two norm gains
}

// The mesh's forward and backward GEMM seconds of one block.
void block_seconds(const MeshChoice& mesh, double& forward, double& backward) {
  forward = backward = 0;
  for (const TunedGemm& g : mesh.gemms) (g.gemm.pass == "fwd" ? forward : backward) += g.seconds;
}

// Bytes of the gathered sub-shards and partial outputs of one GEMM's plan: two slices each
// (double buffering), as gemm/meshslice.hpp allocates them.
double gemm_workspace(const TunedGemm& g, int rows, int cols, const TensorBytes& bytes) {
  const GemmProblem& p = g.gemm.problem;
  const double M = p.M, N = p.N, K = p.K, r = rows, c = cols, S = g.slices;
  const double a = bytes.gathered, o = bytes.partial_sums;
  switch (p.flow) {
    case Dataflow::OS: return 2 * a * (M / r * K / S + K / S * N / c);
    case Dataflow::LS: return 2 * (a * N / S * K / c + o * M / r * N / S);
    case Dataflow::RS: return 2 * (a * K / r * M / S + o * M / S * N / c);
  }
  return 0;
}

}  // namespace

TensorBytes TensorBytes::pure(double element_bytes) {
  TensorBytes b;
  b.weights = b.gradients = b.activations = element_bytes;
  b.kept_in_bf16 = b.gathered = b.partial_sums = element_bytes;
  b.weight_copies = 0;  // the weights are kept at the element width: no copy
  return b;
}

TensorBytes TensorBytes::of_run(const std::string& precision) {
  if (precision != "bf16") return pure(precision_element_bytes(precision));
  TensorBytes b;  // float storage
  b.kept_in_bf16 = b.gathered = b.weight_copies = 2;
  return b;
}

std::size_t TrainingConfig::blocks_per_chunk(const TrainingModel& m) const {
  const std::size_t chunks = static_cast<std::size_t>(pp) * virtual_stages;
  return (m.blocks + chunks - 1) / chunks;
}

std::string TrainingConfig::str() const {
  return concat("dp", dp, " x pp", pp, " x ", rows, "x", cols, ", ", schedule_name(schedule),
                schedule == PipelineSchedule::interleaved ? concat(" v", virtual_stages) : "", " m",
                microbatches, checkpointing ? ", checkpointed" : "", zero ? ", ZeRO-1" : "");
}

double step_flops(const TrainingModel& m) {
  const double tokens = static_cast<double>(m.global_batch * m.seq_len);
  const double head = static_cast<double>(m.llm.hidden) * static_cast<double>(m.vocab);
  return 3 * 2 * tokens * (block_weights(m) * static_cast<double>(m.blocks) + head);
}

StepEstimate estimate_step(const CostModel& model, const TrainingModel& m, const TrainingConfig& c,
                           const MeshChoice& mesh, const MeshChoice* head,
                           const TensorBytes* bytes) {
  const TensorBytes b = bytes ? *bytes : TensorBytes::pure(model.element_bytes());
  double forward = 0, backward = 0;
  block_seconds(mesh, forward, backward);
  const double n = static_cast<double>(c.blocks_per_chunk(m));
  const double t_f = n * forward, t_b = n * (backward + (c.checkpointing ? forward : 0));
  const double v = static_cast<double>(c.virtual_stages);
  StepEstimate e;
  e.compute = static_cast<double>(c.microbatches) * v * (t_f + t_b);
  e.bubble = (c.pp - 1) * (t_f + t_b);
  if (head) {  // the last stage's, once per micro-batch
    e.compute += static_cast<double>(c.microbatches) * head->seconds;
    e.bubble += (c.pp - 1) * head->seconds;
  }
  if (c.pp > 1) {
    const double shard =
        c.microbatch_tokens(m) * static_cast<double>(m.llm.hidden) / c.tp() * b.activations;
    e.pp_transfers = 2 * (c.pp * v - 1) * model.send_recv_seconds(hw::Ring::pp, shard);
  }
  if (c.dp > 1) {
    // The stage's blocks finish their last backward one after another, the last block first;
    // their reductions queue on the dp link.
    const double grad_bytes = block_parameters(m) / c.tp() * b.gradients;
    const double reduce = c.zero ? model.reduce_scatter_seconds(hw::Ring::dp, c.dp, grad_bytes)
                                 : model.all_reduce_seconds(hw::Ring::dp, c.dp, grad_bytes);
    const double per_block_backward = backward + (c.checkpointing ? forward : 0);
    const std::size_t blocks = c.blocks_per_chunk(m) * c.virtual_stages;
    double link_free = 0;  // relative to the end of the backward pass
    for (std::size_t j = 0; j < blocks; ++j) {
      const double ready = -static_cast<double>(blocks - 1 - j) * per_block_backward;
      link_free = std::max(link_free, ready) + reduce;
    }
    e.dp_exposed = std::max(0.0, link_free);
    if (c.zero) {
      // The updated parameters come back: a bf16 run's weight matrices as their bf16 copies
      // (their fp32 masters stay sharded), the gains at the weights' width.
      const double copy_bytes = b.weight_copies > 0 ? b.weight_copies : b.weights;
      const double gathered =
          block_weights(m) * copy_bytes + (block_parameters(m) - block_weights(m)) * b.weights;
      e.dp_exposed += blocks * model.all_gather_seconds(hw::Ring::dp, c.dp, gathered / c.tp());
    }
  }
  return e;
}

MemoryEstimate estimate_memory(const TrainingModel& m, const TrainingConfig& c,
                               const MeshChoice& mesh, const TensorBytes& bytes,
                               const MeshChoice* head) {
  const std::size_t chunk_blocks = c.blocks_per_chunk(m);
  double parameters = block_parameters(m) * chunk_blocks * c.virtual_stages / c.tp();
  // Stage 0's embedding table, and with one stage the head's too.
  const bool holds_head = m.vocab > 0 && c.pp == 1;
  const double padded =
      m.vocab > 0 ? static_cast<double>(mesh_padded_vocab(m.vocab, c.rows, c.cols)) : 0.0;
  parameters += (holds_head ? 2 : 1) * padded * static_cast<double>(m.llm.hidden) / c.tp();
  // The blocks' weight matrices keep bf16 copies (weight_copies bytes each), and the head's.
  const double copied = block_weights(m) * chunk_blocks * c.virtual_stages / c.tp() +
                        (holds_head ? padded * static_cast<double>(m.llm.hidden) / c.tp() : 0.0);
  MemoryEstimate e;
  e.weights = parameters * bytes.weights + copied * bytes.weight_copies;
  // ZeRO-1 shards the fp32 masters of the weights read through their bf16 copies too.
  if (c.zero && bytes.weight_copies > 0) e.weights -= copied * bytes.weights * (1.0 - 1.0 / c.dp);
  e.gradients = parameters * bytes.gradients;
  e.optimizer = parameters * m.optimizer_states * kOptimizerStateBytes / (c.zero ? c.dp : 1);
  // Activations: per token of a micro-batch, what a block keeps for its backward pass
  // (block/block_module.hpp: 17 H for GeLU at F = 4H, attn_out's input counted apart), and the
  // probabilities; QKV's, FF1's and FF2's inputs and QKV's and FF1's outputs at kept_in_bf16
  // bytes.
  const double h = static_cast<double>(m.llm.hidden);
  const BlockSavedWidths saved = block_saved_widths(m.llm.dims());
  const double tokens = static_cast<double>(c.microbatch_tokens(m)) / c.tp();
  const double probabilities = m.llm.heads * static_cast<double>(m.seq_len);
  const double full =
      tokens * ((saved.kept + saved.maybe_aliased + probabilities) * bytes.activations +
                saved.in_bf16 * bytes.kept_in_bf16);
  const double kept = c.checkpointing ? tokens * h * bytes.activations : full;
  const auto order = pipeline_order(c.schedule, c.pp, 0, c.microbatches, c.virtual_stages);
  const double held = static_cast<double>(peak_activations(order));  // chunk activations at once
  e.activations = held * chunk_blocks * kept + (c.checkpointing ? full : 0);
  for (const TunedGemm& g : mesh.gemms) e.workspaces += gemm_workspace(g, c.rows, c.cols, bytes);
  if (holds_head && head) {  // one micro-batch's logits (their gradient in place), and the plans
    e.activations += tokens * padded * bytes.activations;
    for (const TunedGemm& g : head->gemms) e.workspaces += gemm_workspace(g, c.rows, c.cols, bytes);
  }
  return e;
}

}  // namespace meshslice::tune
