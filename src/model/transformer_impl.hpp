#pragma once
// The definitions of model/transformer.hpp's Transformer, for the translation units that
// instantiate it: model/transformer.cpp for the real executors, and where an emulating executor
// is combined with them (apps/train/train_emulated.cpp, tests/mpi/test_transformer_emulated.cpp).
#include "model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <mpi.h>

#include "core/errors.hpp"
#include "exec/host_reduction.hpp"
#include "model/model_buffer.hpp"
#include "model/model_math.hpp"

namespace meshslice {
namespace transformer_detail {

inline void check_shape(const ModelShape& s, int pr, int pc) {
  require(s.hidden > 0 && s.heads > 0 && s.blocks > 0 && s.seq_len > 0 && s.sequences > 0,
          "model: hidden, heads, blocks, seq_len and sequences must all be positive");
  require(s.hidden % s.heads == 0, "model: hidden size ", s.hidden, " is not divisible by the ",
          s.heads, " heads (heads x head_dim must equal hidden)");
  require(!s.rope || s.head_dim() % 2 == 0,
          "model: RoPE turns pairs of dimensions, but a head "
          "has ",
          s.head_dim(), " (hidden / heads): choose an even head size");
  require(s.heads % static_cast<std::size_t>(pc) == 0, "model: ", s.heads,
          " heads do not divide over the ", pc,
          " mesh columns that split the hidden dimension "
          "(each column keeps whole heads); choose heads divisible by ",
          pc, " or another mesh");
  require(s.kv() > 0 && s.heads % s.kv() == 0, "model: model.kv_heads = ", s.kv(),
          " must divide model.heads = ", s.heads,
          " (each key and value head serves a group of query heads)");
  require(s.kv() % static_cast<std::size_t>(pc) == 0, "model: ", s.kv(),
          " key and value heads (model.kv_heads) do not divide over the ", pc,
          " mesh columns (each column keeps whole groups of query heads with their key and value "
          "heads); choose kv_heads divisible by ",
          pc, " or another mesh");
  const std::size_t F = s.ffn();
  require(F % std::size_t(pr) == 0 && F % std::size_t(pc) == 0, "model: the MLP's width ", F,
          " (model.ffn_hidden) does not divide over the mesh's ", pr, " rows and ", pc,
          " columns (FF1's outputs are split over either, as its plan lays them out); choose a "
          "width divisible by both");
  require(s.sequences % static_cast<std::size_t>(pr) == 0, "model: ", s.sequences,
          " sequences per replica do not divide over the ", pr,
          " mesh rows that split the "
          "tokens (each row keeps whole sequences); choose sequences divisible by ",
          pr, " or another mesh");
}

// The executor, once the shape and the plan are checked against its mesh.
template <class Exec>
Exec& checked(Exec& ex, const ModelShape& shape, const ModelPlan& plan) {
  // Every plan a deck or the tuner gives names each layer (parse_model_plan); one made in code
  // for another block would index past its layers.
  MESHSLICE_ASSERT(plan.blocks.size() == block_fc_count(), "Transformer: a plan for ",
                   plan.blocks.size(), " FC layers, the block has ", block_fc_count());
  check_shape(shape, ex.mesh_rows(), ex.mesh_cols());
  check_lm_head_plan(shape, plan);
  return ex;
}

}  // namespace transformer_detail

template <class Exec>
Transformer<Exec>::Transformer(Exec& ex, const ModelShape& shape, const ModelPlan& plan,
                               std::uint64_t seed, bool trainable, const ModelPart& part)
    : ex_(ex),
      torus_(ex.torus()),
      space_(ex.compute_space()),
      shape_(shape),
      plan_(plan),
      trainable_(trainable),
      params_(model_tensors(shape)),
      optimizer_(part.optimizer),
      chunks_(part.chunks.empty() ? std::vector<ModelChunk>{{0, shape.blocks, 1}} : part.chunks),
      activations_(transformer_detail::checked(ex, shape, plan), shape, plan),
      relayouts_(ex, shape.tokens()),
      fc_(ex, shape, plan, trainable, relayouts_, memory_),
      norm_(ex, shape.tokens(), shape.hidden, trainable),
      context_{ex, shape, chip_attention(ex, shape, plan), fc_, relayouts_, norm_, {}, {}, {}} {
  ParameterMaker<Exec> make(ex, params_, optimizer_, trainable, part.zero, memory_);
  const std::size_t H = shape.hidden;
  // Where each FC layer's input comes from (block/block_fc_layers.hpp): a norm writes it in the
  // standard layout, an element-wise kernel on the previous layer's output (the MLP's
  // activation) in that layer's output layout; attention's output stays in T.
  const FcLayerList layers = block_fc_layers(shape.dims());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const FcKind k = FcKind(i);
    const BlockFcLayer::Input input = layers[i].input;
    const Layout written = input == BlockFcLayer::Input::previous ? fc_.plan(FcKind(i - 1)).output()
                                                                  : Layout::standard;
    const bool in_bf16 =
        input != BlockFcLayer::Input::attention && fc_.input_written_in_bf16(k, written);
    activations_.keep_input_in_bf16(k, in_bf16);
    fc_.reserve_rounding(k, in_bf16);
  }
  for (const ModelChunk& c : chunks_) {
    MESHSLICE_ASSERT(c.blocks > 0 && c.first + c.blocks <= shape.blocks && c.slots > 0,
                     "Transformer: chunk of blocks ", c.first, " + ", c.blocks, " with ", c.slots,
                     " slots does not fit a model of ", shape.blocks, " blocks");
    chunk_begin_.push_back(blocks_.size());
    for (std::size_t bi = c.first; bi < c.first + c.blocks; ++bi) {
      Block& b = blocks_.emplace_back();
      b.index = bi;
      b.params = params_.size();  // in ParamKind order: params_of(b)[kind] finds each
      for (const BlockLayerSpec& layer : block_layers())
        if (layer.param) add_parameter(make, bi, *layer.param, seed);
      // A model without gradients keeps nothing for a backward pass: every block works in the
      // shared set.
      b.stored = activations_.add_block(!trainable || part.checkpointed.count(bi) > 0, c.slots);
    }
  }
  h_ = activation(Layout::standard, H, "normed", memory_.work);
  o_ = activation(Layout::standard, H, "fc_output", memory_.work);
  if (trainable) g_h_ = activation(Layout::standard, H, "grad_normed", memory_.work);
  activations_.add_recomputation(h_, o_);
  memory_.activations = activations_.bytes();
  memory_.work += norm_.work_bytes();
  context_.normed = h_;
  context_.output = o_;
  context_.normed_grad = g_h_;
  modules_ = std::make_unique<BlockModules<Exec>>(context_, trainable, memory_);
  if (shape.vocab > 0) add_lm_ends(make, seed);
  if (trainable) {
    g_x_[0] = activation(Layout::standard, H, "grad_x", memory_.work);
    g_x_[1] = activation(Layout::standard, H, "grad_x", memory_.work);
    // The gradients in backward order: the blocks last to first, each block's parameters as its
    // layers' backward steps complete them (model/block_layers.hpp). The schedule decides which
    // chunk finishes first, but a chunk's backward passes follow the later chunks' (the last
    // micro-batch's gradients flow through the virtual stages in reverse), so this order holds.
    // A language model's head and final gain come first (its loss step makes them), its
    // embedding last.
    std::vector<std::size_t> order;
    if (lm_) order = lm_->first_gradients();
    for (std::size_t bi = blocks_.size(); bi-- > 0;)
      for (ParamKind kind : gradient_order())
        order.push_back(blocks_[bi].params + static_cast<std::size_t>(kind));
    if (lm_)
      for (const std::size_t i : lm_->last_gradients()) order.push_back(i);
    update_ = std::make_unique<ParameterUpdate<Exec>>(ex, params_, optimizer_, order);
  }
  // Plan the re-layouts the block plan needs, both ways (sizes checked here, not in the first
  // step; nothing is allocated during a step).
  fc_.plan_relayouts();
  memory_.workspaces += fc_.workspace_bytes();
  if (lm_) memory_.workspaces += lm_->workspace_bytes();
  memory_.workspaces += relayouts_.workspace_bytes();
  if (update_) memory_.workspaces += update_->workspace_bytes();
  rounded_weights_ = RoundedCopies<T>(params_);
  values_written();
  fence(space_, "transformer_init");
}

template <class Exec>
void Transformer<Exec>::add_parameter(ParameterMaker<Exec>& make, std::size_t block,
                                      const BlockParam& param, std::uint64_t seed) {
  const ParamKind kind = param.kind;
  const bool gain = is_gain(kind);
  Parameter<T> p;
  p.name = parameter_name(block, kind);
  p.order = model_parameter_order(block, kind);
  p.decays = !gain;
  p.global = param_shape(shape_, kind);
  p.layout = stored_layout(kind);
  p.row_copies = gain;
  std::size_t rows = p.global.rows, cols = p.global.cols;
  if (p.layout.transposed) std::swap(rows, cols);
  if (!gain) rows /= ex_.mesh_rows();
  cols /= ex_.mesh_cols();
  const bool copy = !gain && fc_.weight_kept_in_bf16(param.fc);
  make.add(std::move(p), rows, cols, seed, param_stream(block, kind), parameter_std(shape_, kind),
           copy ? Bf16Copy::only_copy_read : Bf16Copy::none);
}

template <class Exec>
void Transformer<Exec>::add_lm_ends(ParameterMaker<Exec>& make, std::uint64_t seed) {
  const auto holds = [&](std::size_t block) {
    return std::any_of(chunks_.begin(), chunks_.end(), [&](const ModelChunk& c) {
      return c.first <= block && block < c.first + c.blocks;
    });
  };
  lm_ = std::make_unique<LanguageModelEnds<Exec>>(
      ex_, shape_, *plan_.lm_head, holds(0), holds(shape_.blocks - 1), make, seed, norm_,
      typename LanguageModelEnds<Exec>::SharedWork{h_, g_h_}, trainable_, memory_);
}

template <class Exec>
std::size_t Transformer<Exec>::local_tokens() const {
  return shape_.tokens() / ex_.mesh_rows();
}

template <class Exec>
std::size_t Transformer<Exec>::local_hidden() const {
  return shape_.hidden / ex_.mesh_cols();
}

template <class Exec>
typename Transformer<Exec>::Mat Transformer<Exec>::activation(Layout layout, std::size_t width,
                                                              const char* label, std::size_t& use) {
  return activation_matrix(ex_, shape_.tokens(), layout, width, label, use);
}

template <class Exec>
StoredLayout Transformer<Exec>::stored_layout(ParamKind kind) const {
  const std::size_t pr = ex_.mesh_rows(), pc = ex_.mesh_cols();
  const std::size_t i = ex_.coord(Axis::row), j = ex_.coord(Axis::col);
  StoredLayout layout;
  const ParamShape logical = param_shape(shape_, kind);
  const BlockParam& declared = *layer_training(kind).param;
  if (declared.gain) {
    layout.col0 = j * (logical.cols / pc);
    return layout;
  }
  const auto fc = static_cast<std::size_t>(declared.fc);
  layout.transposed = plan_[fc].weight_transposed();
  const std::size_t rows = layout.transposed ? logical.cols : logical.rows;
  const std::size_t cols = layout.transposed ? logical.rows : logical.cols;
  layout.row0 = i * (rows / pr);
  layout.col0 = j * (cols / pc);
  const FcLayerList layers = block_fc_layers(shape_.dims());
  const auto& parts = layers[fc].output_parts;
  if (parts[0] > 0) {
    // A chip holds whole parts of the outputs it holds where they are read: in the standard
    // layout (over mesh columns), or in the layer's own output layout when the next layer reads
    // it directly (FF1's, through the MLP's activation).
    const bool kept =
        fc + 1 < layers.size() && layers[fc + 1].input == BlockFcLayer::Input::previous;
    const bool by_columns = !kept || plan_[fc].output() == Layout::standard;
    layout.outputs = {by_columns ? pc : pr, {parts[0], parts[1], parts[2]}};
  }
  return layout;
}

template <class Exec>
void Transformer<Exec>::require_whole(const char* call) const {
  require(chunks_.size() == 1 && chunks_[0].blocks == shape_.blocks, "Transformer::", call,
          " on a model split into chunks: name the chunk and slot");
}

template <class Exec>
void Transformer<Exec>::forward(const Mat& x, const Mat& y) {
  require_whole("forward(x, y)");
  forward(0, 0, x, y);
}

template <class Exec>
void Transformer<Exec>::backward(const Mat& dy) {
  require_whole("backward(dy)");
  begin_step();
  backward(0, 0, dy, Mat(), /*accumulate=*/false, /*sync=*/true);
}

template <class Exec>
void Transformer<Exec>::begin_step() {
  require(trainable_, "Transformer::begin_step on a model built without gradients");
  update_->begin_step();
}

template <class Exec>
void Transformer<Exec>::forward(std::size_t chunk, std::size_t slot, const Mat& x, const Mat& y) {
  MESHSLICE_ASSERT(chunk < chunks_.size(), "Transformer::forward: chunk ", chunk, " of ",
                   chunks_.size());
  MESHSLICE_ASSERT(x.extent(0) == local_tokens() && x.extent(1) == local_hidden() &&
                       y.extent(0) == local_tokens() && y.extent(1) == local_hidden(),
                   "Transformer::forward: shards must be ", local_tokens(), "x", local_hidden());
  const std::size_t n = chunks_[chunk].blocks;
  context_.residual(activations_.input(block_of(chunk, 0).stored, slot), x, Mat());
  for (std::size_t i = 0; i < n; ++i) {
    const Block& b = block_of(chunk, i);
    block_forward(b, working_set(b, slot),
                  i + 1 < n ? activations_.input(block_of(chunk, i + 1).stored, slot) : y);
  }
  fence(space_, "transformer_forward");
}

template <class Exec>
void Transformer<Exec>::block_forward(const Block& b, const Saved& s, const Mat& out) {
  modules_->forward(params_of(b), s, out,
                    elements(out) ? block_layers().size() : recomputed_layers());
}

template <class Exec>
void Transformer<Exec>::backward(std::size_t chunk, std::size_t slot, const Mat& dy, const Mat& dx,
                                 bool accumulate, bool sync) {
  require(trainable_, "Transformer::backward on a model built without gradients");
  MESHSLICE_ASSERT(chunk < chunks_.size(), "Transformer::backward: chunk ", chunk, " of ",
                   chunks_.size());
  MESHSLICE_ASSERT(dy.extent(0) == local_tokens() && dy.extent(1) == local_hidden(),
                   "Transformer::backward: dy must be ", local_tokens(), "x", local_hidden());
  const Mat* dout = &dy;
  for (std::size_t i = chunks_[chunk].blocks; i-- > 0;) {
    const Block& b = block_of(chunk, i);
    const Mat& din = i == 0 && elements(dx) ? dx : g_x_[i % 2];
    const Saved s = working_set(b, slot);
    if (activations_.checkpointed(b.stored))
      ex_.phase("recompute", [&] { block_forward(b, s, Mat()); });
    block_backward(b, s, *dout, din, accumulate, sync);
    dout = &din;
  }
}

template <class Exec>
void Transformer<Exec>::block_backward(const Block& b, const Saved& s, const Mat& dout,
                                       const Mat& din, bool accumulate, bool sync) {
  modules_->backward(params_of(b), s, dout, din, accumulate, sync ? update_.get() : nullptr);
}

template <class Exec>
double Transformer<Exec>::update(const OptimizerSettings& optimizer, std::size_t t) {
  const double norm = reduce_gradients();
  apply_update(optimizer, t, norm);
  return norm;
}

template <class Exec>
double Transformer<Exec>::reduce_gradients() {
  require(trainable_, "Transformer::reduce_gradients on a model built without gradients");
  return update_->reduce();
}

template <class Exec>
void Transformer<Exec>::apply_update(const OptimizerSettings& optimizer, std::size_t t,
                                     double norm) {
  require(trainable_, "Transformer::apply_update on a model built without gradients");
  update_->apply(optimizer, t, norm);
  rounded_weights_.refresh(space_);
}

template <class Exec>
std::string Transformer<Exec>::first_nonfinite_gradient() {
  require(trainable_, "Transformer::first_nonfinite_gradient on a model built without gradients");
  const std::size_t first = update_->first_nonfinite();
  if (first == ParameterUpdate<Exec>::none) return "";
  return model_parameter_name(shape_, first);
}

template <class Exec>
std::vector<double> Transformer<Exec>::gather(std::size_t block, ParamKind kind) const {
  MESHSLICE_ASSERT(block < shape_.blocks, "Transformer::gather: block ", block, " of ",
                   shape_.blocks);
  return gather(parameter_name(block, kind), param_shape(shape_, kind));
}

template <class Exec>
std::vector<double> Transformer<Exec>::gather(LmParam param) const {
  return gather(lm_parameter_name(param), lm_param_shape(shape_, param));
}

template <class Exec>
std::vector<double> Transformer<Exec>::gather(const std::string& name,
                                              const ParamShape& logical) const {
  std::vector<double> global(logical.rows * logical.cols, 0.0);
  const Parameter<T>* held = params_.find(name);
  const auto host =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), held ? held->values() : Mat());
  // Each element from the one rank whose copy counts (replica 0's, or a sharded master's row
  // from its replica), summed over the shards, the stage that holds it and the replicas.
  if (held && held->value_counts(ex_.coord(Axis::dp), ex_.coord(Axis::row))) {
    const std::size_t cols = held->value.extent(1), first = held->values_first();
    for (std::size_t i = 0; i < elements(host); ++i) {
      std::size_t row = 0, col = 0;
      held->layout.logical((first + i) / cols, (first + i) % cols, row, col);
      if (row < logical.rows && col < logical.cols)  // not the vocabulary's padding
        global[row * logical.cols + col] = static_cast<double>(host.data()[i]);
    }
  }
  reduce_through(ex_, "gather", {Axis::tp, Axis::pp, Axis::dp}, global.data(), global.size(),
                 MPI_DOUBLE, MPI_SUM);
  return global;
}

}  // namespace meshslice
