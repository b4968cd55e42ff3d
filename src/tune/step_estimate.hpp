#pragma once
// The joint planner's model of one training step of a configuration dp x pp x rows x cols with
// m micro-batches, a pipeline schedule, activation checkpointing and ZeRO-1 (every chip of a
// stage does the same work, so one chip stands for all):
//
//   time    each (virtual) stage runs n_c blocks per chunk; a micro-batch's chunk takes
//           t_f = n_c * (the block's forward FC GEMMs) and t_b = n_c * (its backward FC GEMMs, plus
//           the forward again when checkpointed), each GEMM at the mesh and S phases 1 and 2 chose
//           for the micro-batch's tokens. Then (Megatron-LM's schedule arithmetic)
//             compute      m v (t_f + t_b)
//             bubble       (pp - 1)(t_f + t_b)         the fill and drain
//             pp transfers 2 (pp v - 1) t_send         one activation shard per hop, fill and drain
//             dp exposed   the gradient reduction not hidden by the last micro-batch's backward:
//                          each block's ring all-reduce (ZeRO-1: reduce-scatter) starts when its
//                          last backward ends, one at a time on the dp link; ZeRO-1's parameter
//                          all-gathers after the update are exposed whole
//   memory  per chip: weights and gradients (TensorBytes: the chip's element size, or the run's
//           storage at its precision), AdamW's two moments in fp32 (divided over dp with
//           ZeRO-1), the activations the schedule holds at its peak
//           (stage 0, which holds the most: pipeline_order / peak_activations) -- per block and
//           micro-batch the 17 H + heads * seq values per token meshslice-train saves (the block's
//           input alone when checkpointed, plus one block's full set to recompute into) -- and
//           the GEMM plans' gather and partial-output buffers (two slices each).
// A language model (vocab > 0) adds its head, the last stage's GEMMs once per micro-batch (the
// head's phase 2 on the stage's mesh, the vocabulary padded for it): m t_head to the compute and
// (pp - 1) t_head to the fill and drain, which wait on the slowest stage; to the memory of the
// chip the estimate stands for (stage 0) the embedding table (V_p x H over the mesh), and with
// one stage also the head (untied: its own table), its gather buffers and one micro-batch's
// logits; to the FLOPs the head's 6 T H V.
// Attention's own work, norms and element-wise kernels are not in the time (the FC layers are
// what the cost model knows; issue 11 adds the rest to the emulator).
#include <cstddef>
#include <string>

#include "pipeline/pipeline_schedule.hpp"
#include "tune/block_tuner.hpp"

namespace meshslice::tune {

struct TrainingModel {
  sim::LlmSpec llm;
  std::size_t blocks = 0;
  std::size_t seq_len = 0;
  std::size_t global_batch = 0;  // sequences per step over all replicas
  std::size_t vocab = 0;         // a language model's vocabulary (before padding); 0: no head
  // fp32 state elements the optimizer keeps per weight (AdamW's two moments; 0 for Adafactor's
  // factors, a value per row and column: optimizer_states_per_weight() reads the table).
  double optimizer_states = 2;
};

struct TrainingConfig {
  int dp = 1, pp = 1, rows = 1, cols = 1;
  std::size_t microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  std::size_t virtual_stages = 1;
  bool checkpointing = false;
  bool zero = false;

  int tp() const { return rows * cols; }
  int chips() const { return dp * pp * rows * cols; }
  std::size_t sequences_per_microbatch(const TrainingModel& m) const {
    return m.global_batch / dp / microbatches;
  }
  std::size_t microbatch_tokens(const TrainingModel& m) const {
    return sequences_per_microbatch(m) * m.seq_len;
  }
  // Blocks of the most loaded chunk: ceil(blocks / (pp v)).
  std::size_t blocks_per_chunk(const TrainingModel& m) const;
  std::string str() const;  // "dp2 x pp4 x 8x4, 1f1b m8, checkpointed, ZeRO-1"
};

struct StepEstimate {
  double compute = 0;
  double bubble = 0;
  double pp_transfers = 0;
  double dp_exposed = 0;
  double total() const { return compute + bubble + pp_transfers + dp_exposed; }
};

// The bytes of an element of each kind of tensor a chip holds, which the memory estimate counts
// them at (and the step's dp and pp messages move). pure: every tensor at the machine's element
// width (the emulated chip's own model: a bf16 TPU run keeps and moves bf16). of_run: as
// meshslice-train keeps them at a train.precision (core/precision.hpp): bf16 keeps float
// weights (the master) with a bf16 copy of the weight matrices (blocks' and head's), float
// gradients, partial sums and activations, and only the gathered GEMM operands, the FC layers'
// saved inputs and QKV's and FF1's saved outputs in bf16.
struct TensorBytes {
  double weights = 4, gradients = 4, activations = 4;
  double weight_copies = 0;  // the weight matrices' copies, blocks' and head's (bf16: 2 bytes)
  double kept_in_bf16 = 4;   // QKV's, FF1's and FF2's saved inputs, QKV's and FF1's outputs
  double gathered = 4;       // the GEMM plans' gathered operand slices
  double partial_sums = 4;   // the LS and RS plans' partial outputs
  static TensorBytes pure(double element_bytes);
  static TensorBytes of_run(const std::string& precision);
};

struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, workspaces = 0;  // bytes
  double total() const { return weights + gradients + optimizer + activations + workspaces; }
};

// `mesh`: phases 1 and 2 for the configuration's micro-batch tokens on its rows x cols; `head`:
// the head's (tune_lm_head) when m.vocab > 0, else null.
// `bytes`: how the chips keep and move their tensors (the model's TensorBytes::pure when null).
StepEstimate estimate_step(const CostModel& model, const TrainingModel& m, const TrainingConfig& c,
                           const MeshChoice& mesh, const MeshChoice* head = nullptr,
                           const TensorBytes* bytes = nullptr);
MemoryEstimate estimate_memory(const TrainingModel& m, const TrainingConfig& c,
                               const MeshChoice& mesh, const TensorBytes& bytes,
                               const MeshChoice* head = nullptr);

// FC FLOPs of one training step over the whole machine (forward, backward data and weight; no
// recomputation; the head's on the unpadded vocabulary), for FLOP utilization.
double step_flops(const TrainingModel& m);

}  // namespace meshslice::tune
