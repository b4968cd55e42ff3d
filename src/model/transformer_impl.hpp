#pragma once
// The definitions of model/transformer.hpp's Transformer, for the translation units that
// instantiate it: model/transformer.cpp for the real executors, and where an emulating executor
// is combined with them (apps/train/train_emulated.cpp, tests/mpi/test_transformer_emulated.cpp).
#include "model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <mpi.h>

#include "comm/recorded_op.hpp"
#include "core/errors.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/rmsnorm.hpp"
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
  require(s.sequences % static_cast<std::size_t>(pr) == 0, "model: ", s.sequences,
          " sequences per replica do not divide over the ", pr,
          " mesh rows that split the "
          "tokens (each row keeps whole sequences); choose sequences divisible by ",
          pr, " or another mesh");
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
      zero_(trainable && part.zero),
      dp_(static_cast<std::size_t>(ex.size(Axis::dp))),
      optimizer_(part.optimizer),
      chunks_(part.chunks.empty() ? std::vector<ModelChunk>{{0, shape.blocks, 1}} : part.chunks),
      small_((transformer_detail::check_shape(shape, ex.mesh_rows(), ex.mesh_cols()),
              std::max(shape.tokens() / ex.mesh_rows(), shape.hidden / ex.mesh_cols()))) {
  check_lm_head_plan(shape, plan);
  const std::size_t T_ = shape.tokens(), H = shape.hidden;
  for (int k = 0; k < kFcKinds; ++k) {
    const FcKind kind = FcKind(k);
    const FcPlan& p = plan_[k];
    try {
      layers_[k] = std::make_unique<FcLayer<Exec>>(ex, p.stationary, p.transposed, T_,
                                                   fc_inputs(shape, kind), fc_outputs(shape, kind),
                                                   p.gemms, trainable);
    } catch (const UserError& e) {
      throw UserError(concat("layer ", fc_name(kind), ": ", e.what()));
    }
    if (p.output() == Layout::transposed)
      out_t_[k] =
          activation(Layout::transposed, fc_outputs(shape, kind), "fc_output_t", memory_.work);
    if (p.input() == Layout::transposed && trainable)
      in_t_[k] =
          activation(Layout::transposed, fc_inputs(shape, kind), "fc_input_grad_t", memory_.work);
  }
  attention_ = {shape.sequences / ex.mesh_rows(),
                shape.seq_len,
                shape.heads / ex.mesh_cols(),
                shape.head_dim(),
                shape.rope,
                plan.attention};
  if constexpr (Exec::holds_data)
    local_attention_ = std::make_unique<LocalAttention<T>>(attention_, trainable);
  attention_work_ = {attention_.forward_work(), attention_.backward_work()};
  memory_.work += LocalAttention<T>::bytes_for(attention_, trainable);
  const FcPlan &p1 = fc_plan(FcKind::ff1), &p2 = fc_plan(FcKind::ff2);
  for (const ModelChunk& c : chunks_) {
    MESHSLICE_ASSERT(c.blocks > 0 && c.first + c.blocks <= shape.blocks && c.slots > 0,
                     "Transformer: chunk of blocks ", c.first, " + ", c.blocks, " with ", c.slots,
                     " slots does not fit a model of ", shape.blocks, " blocks");
    chunk_begin_.push_back(blocks_.size());
    for (std::size_t bi = c.first; bi < c.first + c.blocks; ++bi) {
      Block& b = blocks_.emplace_back();
      b.index = bi;
      // A model without gradients keeps nothing for a backward pass: every block works in the
      // shared set.
      b.checkpointed = !trainable || part.checkpointed.count(bi) > 0;
      b.params = params_.size();  // in ParamKind order: param(b, kind) indexes by kind
      for (const BlockLayerSpec& layer : block_layers())
        if (layer.trains) add_parameter(bi, layer.param, seed);
      for (std::size_t slot = 0; slot < c.slots; ++slot) {
        if (!b.checkpointed) {
          b.saved.push_back(saved_set(true, memory_.activations));
          continue;
        }
        Saved input;
        input.x_in = activation(Layout::standard, H, "x_in", memory_.activations);
        b.saved.push_back(input);
      }
    }
  }
  h_ = activation(Layout::standard, H, "normed", memory_.work);
  o_ = activation(Layout::standard, H, "fc_output", memory_.work);
  if (std::any_of(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.checkpointed; }))
    recompute_ = saved_set(false, memory_.activations, /*in_staging=*/true);
  ss_ = alloc(local_tokens(), 1, "rms_sums", memory_.work);
  if (p2.input() != p1.output())
    z_ = activation(p1.output(), shape.ffn(), "gelu_out", memory_.work);
  if (shape.vocab > 0) add_lm_ends(seed);
  if (trainable) {
    dot_ = alloc(local_tokens(), 1, "rms_dots", memory_.work);
    gain_tiles_ = alloc(gain_tiles(local_tokens()), local_hidden(), "rms_gain_tiles", memory_.work);
    g_mid_ = activation(Layout::standard, H, "grad_x_mid", memory_.work);
    g_h_ = activation(Layout::standard, H, "grad_normed", memory_.work);
    g_a_ = activation(Layout::standard, H, "grad_attention", memory_.work);
    g_qkv_ = activation(Layout::standard, 3 * H, "grad_qkv", memory_.work);
    g_u_ = activation(p1.output(), shape.ffn(), "grad_ff1_out", memory_.work);
    if (p2.input() != p1.output())
      g_z_ = activation(p2.input(), shape.ffn(), "grad_ff2_in", memory_.work);
    g_x_[0] = activation(Layout::standard, H, "grad_x", memory_.work);
    g_x_[1] = activation(Layout::standard, H, "grad_x", memory_.work);
    g_gain_ = alloc(1, local_hidden(), "grad_gain", memory_.work);
    // The gradients in backward order: the blocks last to first, each block's parameters as its
    // layers' backward steps complete them (model/block_layers.hpp). The schedule decides which
    // chunk finishes first, but a chunk's backward passes follow the later chunks' (the last
    // micro-batch's gradients flow through the virtual stages in reverse), so this order holds.
    // A language model's head and final gain come first (its loss step makes them), its
    // embedding last.
    std::vector<std::size_t> order;
    for (std::size_t i : {head_, final_gain_})
      if (i != kNone) order.push_back(i);
    for (std::size_t bi = blocks_.size(); bi-- > 0;)
      for (ParamKind kind : gradient_order())
        order.push_back(blocks_[bi].params + static_cast<std::size_t>(kind));
    if (embedding_ != kNone) order.push_back(embedding_);
    update_ = std::make_unique<ParameterUpdate<Exec>>(ex, params_, optimizer_, order);
  }
  // Plan the re-layouts the block plan needs, both ways (sizes checked here, not in the first
  // step; nothing is allocated during a step).
  const auto plan_relayouts = [this](std::size_t width) {
    relayout_cost(Layout::standard, width);
    relayout_cost(Layout::transposed, width);
  };
  for (int k = 0; k < kFcKinds; ++k) {
    if (plan_[k].input() == Layout::transposed) plan_relayouts(fc_inputs(shape, FcKind(k)));
    if (plan_[k].output() == Layout::transposed) plan_relayouts(fc_outputs(shape, FcKind(k)));
  }
  if (p2.input() != p1.output()) plan_relayouts(shape.ffn());
  for (const auto& l : layers_) memory_.workspaces += l->workspace_bytes();
  if (head_layer_) memory_.workspaces += head_layer_->workspace_bytes();
  if (embedding_layer_) memory_.workspaces += embedding_layer_->workspace_bytes();
  for (const auto& [key, transpose] : transposes_) memory_.workspaces += transpose->bytes();
  if (update_) memory_.workspaces += update_->workspace_bytes();
  fence(space_, "transformer_init");
}

template <class Exec>
void Transformer<Exec>::add_parameter(std::size_t block, ParamKind kind, std::uint64_t seed) {
  Parameter<T> p;
  p.name = parameter_name(block, kind);
  p.order = model_parameter_order(block, kind);
  p.decays = !is_gain(kind);
  p.global = param_shape(shape_, kind);
  p.layout = stored_layout(kind);
  p.row_copies = is_gain(kind);
  std::size_t rows = p.global.rows, cols = p.global.cols;
  if (p.layout.transposed) std::swap(rows, cols);
  if (!is_gain(kind)) rows /= ex_.mesh_rows();
  cols /= ex_.mesh_cols();
  add_parameter(std::move(p), rows, cols, seed, param_stream(block, kind),
                parameter_std(shape_, kind));
}

template <class Exec>
std::size_t Transformer<Exec>::add_parameter(Parameter<T> p, std::size_t rows, std::size_t cols,
                                             std::uint64_t seed, std::uint64_t stream,
                                             double std_dev) {
  p.value = alloc(rows, cols, p.name.c_str(), memory_.parameters);
  if constexpr (Exec::holds_data) fill_parameter(space_, p.value, p.layout, seed, stream, std_dev);
  if (trainable_) {
    p.grad = alloc(rows, cols, "gradient", memory_.gradients);
    const std::size_t n = rows * cols;
    if (zero_ && dp_ > 1 && n % dp_ == 0) {  // ZeRO-1: this replica's row of dp
      p.grad_row = alloc(1, n / dp_, "gradient_shard", memory_.gradients);
      p.dp_rows = dp_;
      p.dp_row = static_cast<std::size_t>(ex_.coord(Axis::dp));
    }
    const Mat updated = p.updated();
    std::vector<Mat> state;
    for (std::size_t i = 0; i < optimizer_.state_count(); ++i)
      state.push_back(
          alloc(updated.extent(0), updated.extent(1), "optimizer_state", memory_.optimizer_state));
    optimizer_.add(std::move(state));
  }
  params_.add(std::move(p));
  return params_.size() - 1;
}

template <class Exec>
Parameter<typename Transformer<Exec>::T> Transformer<Exec>::lm_parameter(LmParam param,
                                                                         std::size_t row0,
                                                                         std::size_t col0) const {
  Parameter<T> p;
  p.name = lm_parameter_name(param);
  p.order = model_parameter_order(shape_, param);
  p.decays = param != LmParam::final_norm_gain;
  p.global = lm_param_shape(shape_, param);
  p.layout.row0 = row0;
  p.layout.col0 = col0;
  p.layout.mesh_cols = ex_.mesh_cols();
  p.row_copies = param == LmParam::final_norm_gain;
  return p;
}

template <class Exec>
void Transformer<Exec>::add_lm_ends(std::uint64_t seed) {
  const std::size_t pr = ex_.mesh_rows(), pc = ex_.mesh_cols(), H = shape_.hidden;
  const std::size_t i = ex_.coord(Axis::row), j = ex_.coord(Axis::col);
  vocab_ = model_vocab(shape_.vocab, pr, pc);
  const std::size_t Vp = vocab_.padded, T_ = shape_.tokens();
  const auto holds = [&](std::size_t block) {
    return std::any_of(chunks_.begin(), chunks_.end(), [&](const ModelChunk& c) {
      return c.first <= block && block < c.first + c.blocks;
    });
  };
  const bool first = holds(0), last = holds(shape_.blocks - 1);
  require(!shape_.tied_head || (first && last),
          "model.tied_head: the embedding is the head, so "
          "the first and the last block must be on one pipeline stage; untie the head or run "
          "without pipeline stages");
  const auto add = [&](LmParam param, std::size_t rows, std::size_t cols, std::size_t row0,
                       std::size_t col0, bool transposed) {
    Parameter<T> p = lm_parameter(param, row0, col0);
    p.layout.transposed = transposed;
    return add_parameter(std::move(p), rows, cols, seed, lm_param_stream(param),
                         lm_param_std(shape_, param));
  };
  // Vocabulary over mesh rows and hidden over mesh columns: the embedding's table, and an
  // X-stationary head's W^T (the table itself when tied).
  const auto add_table = [&](LmParam param, bool transposed) {
    return add(param, Vp / pr, H / pc, i * (Vp / pr), j * (H / pc), transposed);
  };
  if (first) {
    embedding_ = add_table(LmParam::embedding, false);
    embedding_layer_ = std::make_unique<TokenEmbedding<Exec>>(ex_, vocab_, H, T_);
    memory_.work += embedding_layer_->work_bytes();
  }
  if (!last) return;
  final_gain_ = add(LmParam::final_norm_gain, 1, H / pc, 0, j * (H / pc), false);
  // The head keeps W (H x V_p: hidden over mesh rows) when Y-stationary, W^T when X-stationary.
  const FcPlan& head = *plan_.lm_head;
  if (!shape_.tied_head)
    head_ = head.weight_transposed()
                ? add_table(LmParam::lm_head, true)
                : add(LmParam::lm_head, H / pr, Vp / pc, i * (H / pr), j * (Vp / pc), false);
  try {
    head_layer_ = std::make_unique<FcLayer<Exec>>(ex_, head.stationary, false, T_, H, Vp,
                                                  head.gemms, trainable_);
  } catch (const UserError& e) {
    throw UserError(concat("the LM head (", H, " -> ", Vp, ", the vocabulary of ", vocab_.vocab,
                           " padded): ", e.what()));
  }
  cross_entropy_ = std::make_unique<VocabCrossEntropy<Exec>>(ex_, vocab_, local_tokens());
  final_rinv_ = alloc(local_tokens(), 1, "final_rinv", memory_.work);
  logits_ = alloc(local_tokens(), Vp / pc, "logits", memory_.work);
  memory_.work += cross_entropy_->work_bytes();
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
typename Transformer<Exec>::Mat Transformer<Exec>::alloc(std::size_t rows, std::size_t cols,
                                                         const char* label, std::size_t& use) {
  use += rows * cols * sizeof(T);
  return model_matrix<Exec>(label, rows, cols);
}

template <class Exec>
typename Transformer<Exec>::Mat Transformer<Exec>::activation(Layout layout, std::size_t width,
                                                              const char* label, std::size_t& use) {
  const std::size_t pr = ex_.mesh_rows(), pc = ex_.mesh_cols(), t = shape_.tokens();
  if (layout == Layout::standard) return alloc(t / pr, width / pc, label, use);
  return alloc(width / pr, t / pc, label, use);
}

template <class Exec>
typename Transformer<Exec>::Saved Transformer<Exec>::saved_set(bool with_input, std::size_t& use,
                                                               bool in_staging) {
  const std::size_t H = shape_.hidden;
  const FcPlan &pq = fc_plan(FcKind::qkv), &pa = fc_plan(FcKind::attn_out);
  const FcPlan &p1 = fc_plan(FcKind::ff1), &p2 = fc_plan(FcKind::ff2);
  // The recomputation's set keeps QKV's and FF1's inputs where a forward pass stages its norm
  // output (h_) and FC outputs (o_), where their layouts allow: the backward pass touches
  // neither; within a forward pass h_ is free once QKV's input is written unless FF1's norm
  // stages there (a transposed FF1 input), and o_ once the attention residual has read it (a
  // recomputation stops before FF2 writes it; a model without gradients keeps nothing).
  const bool ff1_in_o = in_staging && p1.input() == Layout::standard;
  const bool qkv_in_h = ff1_in_o && pq.input() == Layout::standard;
  Saved s;
  if (with_input) s.x_in = activation(Layout::standard, H, "x_in", use);
  s.rinv1 = alloc(local_tokens(), 1, "rinv", use);
  s.qkv_in = qkv_in_h ? h_ : activation(pq.input(), H, "qkv_in", use);
  s.qkv = activation(Layout::standard, 3 * H, "qkv", use);
  s.attention = model_vector<Exec>("attention_saved", attention_.saved_elements());
  use += elements(s.attention) * sizeof(T);
  s.a = activation(Layout::standard, H, "attention", use);
  s.ao_in = pa.input() == Layout::standard ? s.a : activation(pa.input(), H, "attn_out_in", use);
  s.x_mid = activation(Layout::standard, H, "x_mid", use);
  s.rinv2 = alloc(local_tokens(), 1, "rinv", use);
  s.ff1_in = ff1_in_o ? o_ : activation(p1.input(), H, "ff1_in", use);
  s.u = activation(p1.output(), shape_.ffn(), "ff1_out", use);
  s.ff2_in = activation(p2.input(), shape_.ffn(), "ff2_in", use);
  return s;
}

template <class Exec>
typename Transformer<Exec>::Saved Transformer<Exec>::working_set(const Block& b,
                                                                 std::size_t slot) const {
  MESHSLICE_ASSERT(slot < b.saved.size(), "Transformer: activation slot ", slot, " of block ",
                   b.index, " (it has ", b.saved.size(), ")");
  if (!b.checkpointed) return b.saved[slot];
  Saved s = recompute_;
  s.x_in = b.saved[slot].x_in;
  return s;
}

template <class Exec>
StoredLayout Transformer<Exec>::stored_layout(ParamKind kind) const {
  const std::size_t pr = ex_.mesh_rows(), pc = ex_.mesh_cols();
  const std::size_t i = ex_.coord(Axis::row), j = ex_.coord(Axis::col);
  StoredLayout layout;
  layout.mesh_cols = pc;
  const ParamShape logical = param_shape(shape_, kind);
  if (is_gain(kind)) {
    layout.col0 = j * (logical.cols / pc);
    return layout;
  }
  for (int k = 0; k < kFcKinds; ++k)
    if (fc_param(FcKind(k)) == kind) layout.transposed = plan_[k].weight_transposed();
  const std::size_t rows = layout.transposed ? logical.cols : logical.rows;
  const std::size_t cols = layout.transposed ? logical.rows : logical.cols;
  layout.row0 = i * (rows / pr);
  layout.col0 = j * (cols / pc);
  if (kind == ParamKind::qkv) layout.qkv_hidden = shape_.hidden;
  return layout;
}

template <class Exec>
BlockTranspose<typename Transformer<Exec>::T>& Transformer<Exec>::transpose_for(Layout from,
                                                                                std::size_t width) {
  const std::size_t t = shape_.tokens();
  const auto key = from == Layout::standard ? std::make_pair(t, width) : std::make_pair(width, t);
  auto& slot = transposes_[key];
  if (!slot) {
    bool staged = false;  // a data-free executor moves nothing through MPI
    if constexpr (Exec::holds_data) staged = ex_.real().staged();
    slot = std::make_unique<BlockTranspose<T>>(torus_, key.first, key.second, staged);
  }
  return *slot;
}

template <class Exec>
const RelayoutCost& Transformer<Exec>::relayout_cost(Layout from, std::size_t width) {
  auto [it, made] = relayout_costs_.try_emplace({from == Layout::standard, width});
  if (!made) return it->second;
  const std::size_t t = shape_.tokens();
  const std::size_t rows = from == Layout::standard ? t : width;
  const std::size_t cols = from == Layout::standard ? width : t;
  const int pr = ex_.mesh_rows(), pc = ex_.mesh_cols();
  RelayoutCost& cost = it->second;
  for (int i = 0; i < pr; ++i)
    for (int j = 0; j < pc; ++j)
      cost.busiest =
          std::max(cost.busiest,
                   static_cast<double>(BlockTranspose<T>::elements_sent(rows, cols, pr, pc, i, j)));
  if constexpr (Exec::holds_data)
    cost.own = static_cast<double>(transpose_for(from, width).elements_sent());
  else
    cost.own = static_cast<double>(BlockTranspose<T>::elements_sent(
        rows, cols, pr, pc, ex_.coord(Axis::row), ex_.coord(Axis::col)));
  return cost;
}

template <class Exec>
void Transformer<Exec>::relayout(const Mat& src, Layout from, std::size_t width, const Mat& dst) {
  const RelayoutCost& cost = relayout_cost(from, width);
  ex_.communicate("relayout", Axis::tp, {CommWork::all_to_all, cost.busiest},
                  [&] { transpose_for(from, width).run(space_, src, dst); });
  relayouts_.count += 1;
  relayouts_.bytes += cost.own * sizeof(T);
}

template <class Exec>
const typename Transformer<Exec>::Mat& Transformer<Exec>::in_layout(const Mat& src, Layout want,
                                                                    std::size_t width,
                                                                    const Mat& dst) {
  if (want == Layout::standard) return src;
  relayout(src, Layout::standard, width, dst);
  return dst;
}

template <class Exec>
template <class Produce>
void Transformer<Exec>::produce_into(Layout made, Layout wanted, std::size_t width,
                                     const Mat& staging, const Mat& dst, Produce&& produce) {
  if (made == wanted) return produce(dst);
  produce(staging);
  relayout(staging, made, width, dst);
}

template <class Exec>
void Transformer<Exec>::norm_into_input(FcKind k, const Mat& x, const Mat& gain, const Mat& rinv,
                                        const Mat& input) {
  produce_into(Layout::standard, fc_plan(k).input(), shape_.hidden, h_, input,
               [&](const Mat& h) { norm_forward(x, gain, rinv, h); });
}

template <class Exec>
void Transformer<Exec>::forward_to_standard(FcKind k, const Mat& input, const Mat& w,
                                            const Mat& output) {
  produce_into(fc_plan(k).output(), Layout::standard, fc_outputs(shape_, k),
               out_t_[static_cast<int>(k)], output,
               [&](const Mat& y) { fc_forward(k, input, w, y); });
}

template <class Exec>
const typename Transformer<Exec>::Mat& Transformer<Exec>::output_gradient(FcKind k, const Mat& dy) {
  return in_layout(dy, fc_plan(k).output(), fc_outputs(shape_, k), out_t_[static_cast<int>(k)]);
}

template <class Exec>
void Transformer<Exec>::backward_data_to_standard(FcKind k, const Mat& dy, const Mat& w,
                                                  const Mat& dx) {
  produce_into(fc_plan(k).input(), Layout::standard, fc_inputs(shape_, k),
               in_t_[static_cast<int>(k)], dx,
               [&](const Mat& d) { fc_backward_data(k, dy, w, d); });
}

template <class Exec>
void Transformer<Exec>::norm_forward(const Mat& x, const Mat& gain, const Mat& rinv, const Mat& h) {
  const double n = static_cast<double>(elements(x));
  ex_.compute("rmsnorm", kernel_work::rmsnorm_sums(n), [&] { row_sum_squares(space_, x, ss_); });
  sum_small(Axis::col, ss_);  // over the hidden dimension
  ex_.compute("rmsnorm", kernel_work::rmsnorm_apply(n),
              [&] { rmsnorm_apply(space_, x, ss_, gain, shape_.hidden, rinv, h); });
}

template <class Exec>
void Transformer<Exec>::norm_backward(const Mat& dh, const Mat& x, const Mat& gain, const Mat& rinv,
                                      const Mat& dx, const Mat& dgain, bool accumulate) {
  const double n = static_cast<double>(elements(x));
  // Accumulating, this micro-batch's gain gradient is made aside and added.
  const Mat& dg = accumulate ? g_gain_ : dgain;
  ex_.compute("rmsnorm_backward", kernel_work::rmsnorm_backward_partials(n),
              [&] { rmsnorm_backward_partials(space_, dh, x, gain, rinv, dot_, dg, gain_tiles_); });
  sum_small(Axis::col, dot_);  // over the hidden dimension
  sum_small(Axis::row, dg);    // over the tokens
  ex_.compute("rmsnorm_backward",
              kernel_work::rmsnorm_backward_apply(n, accumulate ? double(elements(dg)) : 0), [&] {
                rmsnorm_backward_apply(space_, dh, x, gain, rinv, dot_, shape_.hidden, dx);
                if (accumulate) add_into(space_, dgain, dg);
              });
}

template <class Exec>
void Transformer<Exec>::sum_small(Axis axis, const Mat& x) {
  ex_.communicate("norm_all_reduce", axis, {CommWork::all_reduce, static_cast<double>(elements(x))},
                  [&] { small_.sum(space_, torus_.axis(axis), x); });
}

template <class Exec>
void Transformer<Exec>::residual(const Mat& out, const Mat& x, const Mat& delta) {
  // A copy, then an add that reads both and writes the sum.
  const double n = static_cast<double>(elements(out));
  ex_.compute("residual", kernel_work::residual(n, elements(delta) > 0), [&] {
    Kokkos::deep_copy(space_, out, x);
    if (elements(delta)) add_into(space_, out, delta);
  });
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
  residual(block_of(chunk, 0).saved.at(slot).x_in, x, Mat());
  for (std::size_t i = 0; i < n; ++i) {
    const Block& b = block_of(chunk, i);
    block_forward(b, working_set(b, slot), i + 1 < n ? block_of(chunk, i + 1).saved[slot].x_in : y);
  }
  fence(space_, "transformer_forward");
}

template <class Exec>
void Transformer<Exec>::block_forward(const Block& b, const Saved& s, const Mat& out) {
  const std::size_t layers = elements(out) ? block_layers().size() : recomputed_layers();
  for (std::size_t i = 0; i < layers; ++i) layer_forward(block_layers()[i].layer, b, s, out);
}

template <class Exec>
void Transformer<Exec>::layer_forward(BlockLayer layer, const Block& b, const Saved& s,
                                      const Mat& out) {
  const std::size_t H = shape_.hidden, F = shape_.ffn();
  auto w = [&](ParamKind kind) -> const Mat& { return param(b, kind).value; };
  switch (layer) {
    case BlockLayer::norm1:
      return norm_into_input(FcKind::qkv, s.x_in, w(ParamKind::norm1_gain), s.rinv1, s.qkv_in);
    case BlockLayer::qkv:
      return forward_to_standard(FcKind::qkv, s.qkv_in, w(ParamKind::qkv), s.qkv);
    case BlockLayer::attention:
      return ex_.compute("attention", attention_work_[0],
                         [&] { local_attention_->forward(space_, s.qkv, s.attention, s.a); });
    case BlockLayer::attn_out:
      in_layout(s.a, fc_plan(FcKind::attn_out).input(), H, s.ao_in);
      return forward_to_standard(FcKind::attn_out, s.ao_in, w(ParamKind::attn_out), o_);
    case BlockLayer::attn_residual: return residual(s.x_mid, s.x_in, o_);
    case BlockLayer::norm2:
      return norm_into_input(FcKind::ff1, s.x_mid, w(ParamKind::norm2_gain), s.rinv2, s.ff1_in);
    case BlockLayer::ff1: return fc_forward(FcKind::ff1, s.ff1_in, w(ParamKind::ff1), s.u);
    case BlockLayer::gelu:  // in FF1's output layout
      return produce_into(fc_plan(FcKind::ff1).output(), fc_plan(FcKind::ff2).input(), F, z_,
                          s.ff2_in, [&](const Mat& z) {
                            ex_.compute("gelu", kernel_work::gelu(double(elements(z))),
                                        [&] { gelu_forward(space_, s.u, z); });
                          });
    case BlockLayer::ff2: return forward_to_standard(FcKind::ff2, s.ff2_in, w(ParamKind::ff2), o_);
    case BlockLayer::ff_residual: return residual(out, s.x_mid, o_);
  }
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
    if (b.checkpointed) ex_.phase("recompute", [&] { block_forward(b, s, Mat()); });
    block_backward(b, s, *dout, din, accumulate, sync);
    dout = &din;
  }
}

template <class Exec>
void Transformer<Exec>::fc_forward(FcKind k, const Mat& x, const Mat& w, const Mat& y) {
  layer(k).forward(ex_.wrap(x), ex_.wrap(w), ex_.wrap(y));
}

template <class Exec>
void Transformer<Exec>::fc_backward_data(FcKind k, const Mat& dy, const Mat& w, const Mat& dx) {
  layer(k).backward_data(ex_.wrap(dy), ex_.wrap(w), ex_.wrap(dx));
}

template <class Exec>
void Transformer<Exec>::fc_backward_weight(FcKind k, const Mat& x, const Mat& dy, const Mat& dw,
                                           bool accumulate) {
  layer(k).backward_weight(ex_.wrap(x), ex_.wrap(dy), ex_.wrap(dw), accumulate);
}

template <class Exec>
void Transformer<Exec>::block_backward(const Block& b, const Saved& s, const Mat& dout,
                                       const Mat& din, bool accumulate, bool sync) {
  for (auto layer = block_layers().rbegin(); layer != block_layers().rend(); ++layer)
    layer_backward(layer->layer, b, s, dout, din, accumulate, sync);
}

template <class Exec>
void Transformer<Exec>::layer_backward(BlockLayer layer, const Block& b, const Saved& s,
                                       const Mat& dout, const Mat& din, bool accumulate,
                                       bool sync) {
  auto w = [&](ParamKind kind) -> const Mat& { return param(b, kind).value; };
  auto grad = [&](ParamKind kind) -> const Mat& { return param(b, kind).grad; };
  // Parameter `kind`'s gradient is complete: its dp averaging starts (the last micro-batch's).
  // An FC layer makes its weight gradient first, so that the averaging overlaps its data GEMM.
  auto done = [&](ParamKind kind) {
    if (sync) update_->start(param(b, kind));
  };
  switch (layer) {
    case BlockLayer::ff_residual:  // the residual path
      return residual(g_mid_, dout, Mat());
    case BlockLayer::ff2: {
      const Mat& dy = output_gradient(FcKind::ff2, dout);
      fc_backward_weight(FcKind::ff2, s.ff2_in, dy, grad(ParamKind::ff2), accumulate);
      done(ParamKind::ff2);
      return produce_into(fc_plan(FcKind::ff2).input(), fc_plan(FcKind::ff1).output(), shape_.ffn(),
                          g_z_, g_u_, [&](const Mat& du) {
                            fc_backward_data(FcKind::ff2, dy, w(ParamKind::ff2), du);
                          });
    }
    case BlockLayer::gelu:
      return ex_.compute("gelu_backward", kernel_work::gelu_backward(double(elements(g_u_))),
                         [&] { gelu_backward(space_, s.u, g_u_); });
    case BlockLayer::ff1:
      fc_backward_weight(FcKind::ff1, s.ff1_in, g_u_, grad(ParamKind::ff1), accumulate);
      done(ParamKind::ff1);
      return backward_data_to_standard(FcKind::ff1, g_u_, w(ParamKind::ff1), g_h_);
    case BlockLayer::norm2:
      norm_backward(g_h_, s.x_mid, w(ParamKind::norm2_gain), s.rinv2, g_mid_,
                    grad(ParamKind::norm2_gain), accumulate);
      return done(ParamKind::norm2_gain);
    case BlockLayer::attn_residual: return residual(din, g_mid_, Mat());
    case BlockLayer::attn_out:
      return fc_backward_in_standard(FcKind::attn_out, b, s.ao_in, g_mid_, g_a_, accumulate, sync);
    case BlockLayer::attention:
      return ex_.compute("attention_backward", attention_work_[1], [&] {
        local_attention_->backward(space_, s.qkv, s.a, g_a_, s.attention, g_qkv_);
      });
    case BlockLayer::qkv:
      return fc_backward_in_standard(FcKind::qkv, b, s.qkv_in, g_qkv_, g_h_, accumulate, sync);
    case BlockLayer::norm1:
      norm_backward(g_h_, s.x_in, w(ParamKind::norm1_gain), s.rinv1, din,
                    grad(ParamKind::norm1_gain), accumulate);
      return done(ParamKind::norm1_gain);
  }
}

template <class Exec>
void Transformer<Exec>::fc_backward_in_standard(FcKind k, const Block& b, const Mat& x,
                                                const Mat& dy, const Mat& dx, bool accumulate,
                                                bool sync) {
  const Parameter<T>& p = param(b, fc_param(k));
  const Mat& dy_out = output_gradient(k, dy);  // in the layout the layer gives its output
  fc_backward_weight(k, x, dy_out, p.grad, accumulate);
  if (sync) update_->start(p);
  backward_data_to_standard(k, dy_out, p.value, dx);
}

template <class Exec>
void Transformer<Exec>::embed(const TokenBatch& batch, const Mat& x) {
  MESHSLICE_ASSERT(embeds(), "Transformer::embed on a rank without the embedding");
  embedding_layer_->forward(batch, params_[embedding_].value, x);
}

template <class Exec>
void Transformer<Exec>::embed_backward(const TokenBatch& batch, const Mat& dx, bool accumulate,
                                       bool sync) {
  MESHSLICE_ASSERT(embeds(), "Transformer::embed_backward on a rank without the embedding");
  const Parameter<T>& table = params_[embedding_];
  // Tied, the head's gradient is in the table's already: add to it.
  embedding_layer_->backward(batch, dx, table.grad, accumulate || shape_.tied_head);
  if (sync) update_->start(table);
}

template <class Exec>
void Transformer<Exec>::head_logits(const Mat& y) {
  norm_forward(y, params_[final_gain_].value, final_rinv_, h_);
  head_layer_->forward(ex_.wrap(h_), ex_.wrap(head_weight().value), ex_.wrap(logits_));
}

template <class Exec>
double Transformer<Exec>::head_loss(const TokenBatch& batch, const Mat& y, double scale,
                                    const Mat& dy, bool accumulate, bool sync) {
  MESHSLICE_ASSERT(has_head(), "Transformer::head_loss on a rank without the head");
  const Parameter<T>& gain = params_[final_gain_];
  const Parameter<T>& head = head_weight();
  head_logits(y);
  const double loss = cross_entropy_->loss_and_gradient(logits_, batch.targets, scale);
  const double counted = ex_.coord(Axis::col) == 0 ? loss : 0.0;
  if (elements(dy) == 0) return counted;  // an evaluation: no gradients
  head_layer_->backward_weight(ex_.wrap(h_), ex_.wrap(logits_), ex_.wrap(head.grad), accumulate);
  if (sync && !shape_.tied_head) update_->start(head);
  head_layer_->backward_data(ex_.wrap(logits_), ex_.wrap(head.value), ex_.wrap(g_h_));
  ex_.compute("zero", LocalWork::streaming(double(elements(dy))),
              [&] { Kokkos::deep_copy(space_, dy, T(0)); });
  norm_backward(g_h_, y, gain.value, final_rinv_, dy, gain.grad, accumulate);
  if (sync) update_->start(gain);
  fence(space_, "head_loss");
  return counted;
}

template <class Exec>
int Transformer<Exec>::next_token(const Mat& y, std::size_t row, const TokenSampling& sampling,
                                  std::uint64_t draw) {
  MESHSLICE_ASSERT(has_head() && row < local_tokens(), "Transformer::next_token: no head or row ",
                   row, " of ", local_tokens());
  head_logits(y);
  struct {
    double logit;
    int id;
  } best{-1e300, -1};
  if constexpr (Exec::holds_data) {
    const std::size_t col = static_cast<std::size_t>(ex_.coord(Axis::col));
    const auto logits = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(logits_, row, Kokkos::ALL));
    for (std::size_t c = 0; c < vocab_.valid_logits(col); ++c) {
      const std::size_t id = vocab_.logit_first(col) + c;
      const double score = token_score(sampling, draw, id, static_cast<double>(logits(c)));
      if (score > best.logit) best = {score, static_cast<int>(id)};
    }
  }
  const AxisComm& ring = torus_.axis(Axis::col);
  const RecordedOp op(ring_op(CommKind::all_reduce, ring, 1, sizeof(best)));
  MPI_Allreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, ring.comm());
  return best.id;
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
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), held ? held->value : Mat());
  if (held && (!held->row_copies || ex_.coord(Axis::row) == 0))
    for (std::size_t r = 0; r < host.extent(0); ++r)
      for (std::size_t c = 0; c < host.extent(1); ++c) {
        std::size_t row = 0, col = 0;
        held->layout.logical(r, c, row, col);
        if (row < logical.rows && col < logical.cols)  // not the vocabulary's padding
          global[row * logical.cols + col] = static_cast<double>(host(r, c));
      }
  for (Axis axis : {Axis::tp, Axis::pp}) {  // the shards, then the stage that holds it
    const AxisComm& ring = torus_.axis(axis);
    const RecordedOp op(ring_op(CommKind::all_reduce, ring, global.size(), sizeof(double)));
    MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_SUM,
                  ring.comm());
  }
  return global;
}

}  // namespace meshslice
