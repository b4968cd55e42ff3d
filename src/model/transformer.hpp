#pragma once
// The transformer of model/model_config.hpp distributed over the mesh with 2D tensor
// parallelism: every activation in the standard layout (tokens over mesh rows, hidden over mesh
// columns), every FC layer's three GEMMs through the distributed GEMM library as the block plan
// says (model/layer_plan.hpp), re-layouts where a layer wants its input or gives its output
// transposed, attention local to each chip, RMSNorm with one small all-reduce over the columns.
// Data parallelism: gradients are averaged over dp, each one started as soon as it exists and
// progressed by the rest of the backward pass (model/gradient_sync.hpp).
//
//     Transformer<float> model(ex, shape, plan, seed, /*trainable=*/true);
//     model.forward(x, y);                 // x, y: this chip's standard-layout shards
//     model.backward(dy);                  // gradients, dp averaging started
//     double norm = model.update(opt, t);  // finishes the averaging, clips, steps the optimizer
//
// Pipeline parallelism and micro-batches: a rank may hold only some model chunks (consecutive
// blocks), and keep the activations of several micro-batches at once, one activation slot each
// (model/trainer.hpp runs the schedule):
//
//     model.begin_step();
//     model.forward(chunk, slot, x, y);                 // micro-batch k in slot `slot`
//     model.backward(chunk, slot, dy, dx, k > 0, k == m - 1);  // accumulate; last: start dp
//
// Weight gradients accumulate over micro-batches through the GEMMs' beta = 1. A checkpointed
// block keeps only its input per slot and recomputes the rest in the backward pass
// (model/activation_store.hpp).
//
// A language model (shape.vocab > 0) adds its two ends on the ranks that hold the first and the
// last block (model/modules/lm_ends.hpp):
//
//     model.embed(batch, x);                              // the first chunk's input
//     double loss = model.head_loss(batch, y, 1.0 / T, dy, k > 0, k == m - 1);  // dy: y's gradient
//     model.embed_backward(batch, dx, k > 0, k == m - 1); // dx: the first chunk's input gradient
//
// Everything is allocated at construction: a step allocates nothing but what the FC layers'
// plans and the re-layouts planned for themselves.
//
// Written over an executor (Exec): RealExecutor<T>, or sim::CombinedExecutor over one, which
// also times every op of the step on an emulated machine (the training driver's hardware mode).
// The tensors are the real executor's shards; the FC layers and the dp averaging take them
// through Exec::wrap, the step's own kernels and collectives go through Exec::compute and
// Exec::communicate with their costs (exec/caller_work.hpp). The Transformer orchestrates; its
// parts live in their own files: a block's modules (model/modules/block_modules.hpp runs them:
// attention_module.hpp, mlp.hpp) over what they share (model/modules/block_context.hpp: the planned FC layers of
// model/planned_fc_layers.hpp, the re-layouts of model/relayouts.hpp, the norm of
// model/modules/rms_norm.hpp), the parameters' making (model/parameter_maker.hpp), the saved
// activations (model/activation_store.hpp), a language model's ends (model/modules/lm_ends.hpp)
// and the dp averaging and optimizer step (model/parameter_update.hpp). Definitions in
// model/transformer_impl.hpp; model/transformer.cpp instantiates the real executors.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exec/real_executor.hpp"
#include "model/activation_store.hpp"
#include "model/block_layers.hpp"
#include "model/kernels/attention.hpp"
#include "model/layer_plan.hpp"
#include "model/memory_use.hpp"
#include "model/model_config.hpp"
#include "model/modules/block_context.hpp"
#include "model/modules/block_modules.hpp"
#include "model/modules/lm_ends.hpp"
#include "model/modules/rms_norm.hpp"
#include "model/parameter_maker.hpp"
#include "model/parameter_update.hpp"
#include "model/planned_fc_layers.hpp"
#include "model/relayouts.hpp"
#include "model/token_sampling.hpp"
#include "model/vocab_parallel.hpp"
#include "parameters/optimizer.hpp"
#include "parameters/parameter_set.hpp"
#include "parameters/rounded_copies.hpp"

namespace meshslice {

// Consecutive blocks a rank holds, and how many micro-batches' activations it keeps for them.
struct ModelChunk {
  std::size_t first = 0;  // the first block's index in the model
  std::size_t blocks = 0;
  std::size_t slots = 1;  // activation slots
};

// What a rank holds of the model and how: its chunks (empty: every block, one slot), the
// model's blocks whose activations are recomputed (those it holds), ZeRO-1: the optimizer
// state sharded over dp (each parameter whose elements divide over dp), and the optimizer whose
// state it keeps.
struct ModelPart {
  std::vector<ModelChunk> chunks;
  std::set<std::size_t> checkpointed;
  bool zero = false;
  OptimizerKind optimizer;  // the table's first: AdamW
};

template <class Exec>
class Transformer {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  // UserError on every rank when the shape cannot be laid out on the mesh (heads, sequences
  // and sizes not divisible by the chips that split them) or a layer's plan cannot run.
  Transformer(Exec& ex, const ModelShape& shape, const ModelPlan& plan, std::uint64_t seed,
              bool trainable, const ModelPart& part = {});

  const ModelShape& shape() const { return shape_; }
  const ModelPlan& plan() const { return plan_; }
  std::size_t local_tokens() const;  // T / Pr: rows of an activation shard
  std::size_t local_hidden() const;  // H / Pc: its columns

  const std::vector<ModelChunk>& chunks() const { return chunks_; }

  // y = model(x) on this replica's tokens (standard layout), for a model of one chunk. A
  // trainable model keeps what the backward pass needs.
  void forward(const Mat& x, const Mat& y);
  // The gradients of everything for the loss gradient dy (standard layout) of the last forward;
  // starts the dp averaging of each gradient as soon as it exists. One chunk.
  void backward(const Mat& dy);

  // A step of several micro-batches (or chunks): begin_step(), then the schedule's forwards and
  // backwards, then update().
  void begin_step();
  // y = chunk(x) for one micro-batch, keeping its activations in `slot`.
  void forward(std::size_t chunk, std::size_t slot, const Mat& x, const Mat& y);
  // The backward pass of the chunk for the micro-batch in `slot`, its output gradient dy: the
  // input gradient into dx (empty: not wanted), the parameter gradients overwritten or, with
  // `accumulate`, added to; `sync`: the chunk's last micro-batch, whose gradients' dp averaging
  // starts as soon as each is complete.
  void backward(std::size_t chunk, std::size_t slot, const Mat& dy, const Mat& dx, bool accumulate,
                bool sync);
  // Finishes the dp averaging, clips to the global norm and applies one optimizer step t
  // (1-based) of the optimizer the model was built for. Returns the global gradient norm before
  // clipping.
  double update(const OptimizerSettings& optimizer, std::size_t t);
  // The same in two parts, for a caller that inspects the norm before the update: the dp
  // averaging finished and the global gradient norm (collective), then the update with it.
  double reduce_gradients();
  void apply_update(const OptimizerSettings& optimizer, std::size_t t, double norm);
  // After the parameters' values were written (drawn at construction, or a checkpoint loaded
  // into parameters()): the bf16 copies refreshed, a sharded master's from every replica's row.
  // Collective over dp.
  void values_written() {
    if (update_) update_->gather_written_values();
    rounded_weights_.refresh(space_);
  }
  // After reduce_gradients(): the name of the first parameter (block by block) whose gradient is
  // not finite, or "" when all are. Collective over the job.
  std::string first_nonfinite_gradient();

  // A language model (shape.vocab > 0): its ends (model/modules/lm_ends.hpp) on the ranks
  // holding the first block (the embedding) and the last one (the final norm, the head and the
  // cross-entropy); `sync` as in backward().
  bool embeds() const { return lm_ && lm_->embeds(); }
  bool has_head() const { return lm_ && lm_->has_head(); }
  const VocabSplit& vocab() const { return lm().vocab(); }  // every rank of a language model
  void embed(const TokenBatch& batch, const Mat& x) { lm().embed(batch, x); }
  void embed_backward(const TokenBatch& batch, const Mat& dx, bool accumulate, bool sync) {
    lm().embed_backward(batch, dx, accumulate, sync ? update_.get() : nullptr);
  }
  double head_loss(const TokenBatch& batch, const Mat& y, double scale, const Mat& dy,
                   bool accumulate, bool sync) {
    return lm().head_loss(batch, y, scale, dy, accumulate, sync ? update_.get() : nullptr);
  }
  int next_token(const Mat& y, std::size_t row, const TokenSampling& sampling, std::uint64_t draw) {
    return lm().next_token(y, row, sampling, draw);
  }

  // The logical (unsharded, unpermuted) parameter, row-major, on every rank. Collective over
  // the job (every stage, the one holding the block answers; every replica, for ZeRO-1's rows
  // of a bf16 run's masters).
  std::vector<double> gather(std::size_t block, ParamKind kind) const;
  std::vector<double> gather(LmParam param) const;  // a language model's (not a tied head)
  // Every trainable tensor this rank holds, and the optimizer's state for each (a trainable
  // model's): what a checkpoint writes and reads.
  const ParameterSet<T>& parameters() const { return params_; }
  const Optimizer<T>& optimizer() const { return optimizer_; }
  const RelayoutCount& relayouts() const { return relayouts_.count(); }
  // Bytes this rank holds for the model, by kind.
  const MemoryUse& memory() const { return memory_; }

 private:
  using Saved = SavedActivations<Exec>;
  struct Block {
    std::size_t index = 0;   // in the model (the seeding's block number)
    std::size_t params = 0;  // its first parameter's place in params_ (the rest follow in order)
    std::size_t stored = 0;  // its id in activations_
  };

  // Block `block`'s parameter `param`, initialised from `seed`.
  void add_parameter(ParameterMaker<Exec>& make, std::size_t block, const BlockParam& param,
                     std::uint64_t seed);
  // A language model's ends, with their parameters where this rank holds the first or the
  // last block.
  void add_lm_ends(ParameterMaker<Exec>& make, std::uint64_t seed);
  // The logical parameter `name` of shape `logical`, gathered (see gather()).
  std::vector<double> gather(const std::string& name, const ParamShape& logical) const;
  // A T x width work buffer in `layout`, counted into `use` (one of memory_'s fields).
  Mat activation(Layout layout, std::size_t width, const char* label, std::size_t& use);
  // The activations block b works in for `slot` (model/activation_store.hpp).
  Saved working_set(const Block& b, std::size_t slot) const {
    return activations_.working_set(b.stored, slot);
  }
  Block& block_of(std::size_t chunk, std::size_t i) { return blocks_[chunk_begin_[chunk] + i]; }
  BlockParams<T> params_of(const Block& b) const { return {&params_, b.params}; }
  // A language model's ends; an invariant failure on a model without a vocabulary.
  LanguageModelEnds<Exec>& lm() const {
    MESHSLICE_ASSERT(lm_, "Transformer: a language model's call on a model without a vocabulary");
    return *lm_;
  }
  StoredLayout stored_layout(ParamKind kind) const;
  void require_whole(const char* call) const;  // UserError unless one chunk of every block
  // The block's layers in order (model/block_layers.hpp), each run by the module that owns it;
  // `out` empty: a recomputation, which stops once the backward pass has all it needs.
  void block_forward(const Block& b, const Saved& s, const Mat& out);
  // The layers in reverse: the block's output gradient is dout, its input gradient din;
  // `accumulate` and `sync` as in backward().
  void block_backward(const Block& b, const Saved& s, const Mat& dout, const Mat& din,
                      bool accumulate, bool sync);

  Exec& ex_;
  const Torus& torus_;
  ExecSpace space_;
  ModelShape shape_;
  ModelPlan plan_;
  bool trainable_;
  MemoryUse memory_;  // before the parts that count into it
  ParameterSet<T> params_;
  Optimizer<T> optimizer_;
  std::vector<ModelChunk> chunks_;
  std::vector<std::size_t> chunk_begin_;           // blocks_ index of each chunk's first block
  std::vector<Block> blocks_;                      // this rank's, chunk by chunk
  ActivationStore<Exec> activations_;              // what the blocks keep for their backward passes
  std::unique_ptr<ParameterUpdate<Exec>> update_;  // trainable: dp averaging, norm, optimizer
  RoundedCopies<T> rounded_weights_;  // a bf16 run's weights in bf16, refreshed after each change
  Relayouts<Exec> relayouts_;
  PlannedFcLayers<Exec> fc_;  // the block's FC layers, for every block
  RmsNorm<Exec> norm_;        // every norm of the model: its work buffers and sums
  // Work buffers shared by the blocks (standard layout).
  Mat h_, o_, g_h_;
  std::array<Mat, 2> g_x_;                       // the residual stream's gradient, block to block
  BlockContext<Exec> context_;                   // what the modules share (the buffers above)
  std::unique_ptr<BlockModules<Exec>> modules_;  // the block's, run on every block
  std::unique_ptr<LanguageModelEnds<Exec>> lm_;  // a language model's (shape.vocab > 0)
};

extern template class Transformer<RealExecutor<float>>;
extern template class Transformer<RealExecutor<double>>;

}  // namespace meshslice
