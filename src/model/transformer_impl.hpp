#pragma once
// The definitions of model/transformer.hpp's Transformer, for the translation units that
// instantiate it: model/transformer.cpp for the real executors, and where an emulating executor
// is combined with them (apps/train_emulated.cpp, tests/mpi/test_transformer_emulated.cpp).
#include "model/transformer.hpp"

#include <cmath>
#include <string>
#include <mpi.h>

#include "core/errors.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/kernels/rmsnorm.hpp"
#include "model/model_math.hpp"

namespace meshslice {
namespace transformer_detail {

inline constexpr ParamKind kBackwardOrder[kParamKinds] = {ParamKind::ff2,        ParamKind::ff1,
                                                   ParamKind::norm2_gain, ParamKind::attn_out,
                                                   ParamKind::qkv,        ParamKind::norm1_gain};

inline void check_shape(const ModelShape& s, int pr, int pc) {
  require(s.hidden > 0 && s.heads > 0 && s.blocks > 0 && s.seq_len > 0 && s.sequences > 0,
          "model: hidden, heads, blocks, seq_len and sequences must all be positive");
  require(s.hidden % s.heads == 0, "model: hidden size ", s.hidden, " is not divisible by the ",
          s.heads, " heads (heads x head_dim must equal hidden)");
  require(s.heads % static_cast<std::size_t>(pc) == 0, "model: ", s.heads,
          " heads do not divide over the ", pc, " mesh columns that split the hidden dimension "
          "(each column keeps whole heads); choose heads divisible by ", pc, " or another mesh");
  require(s.sequences % static_cast<std::size_t>(pr) == 0, "model: ", s.sequences,
          " sequences per replica do not divide over the ", pr, " mesh rows that split the "
          "tokens (each row keeps whole sequences); choose sequences divisible by ", pr,
          " or another mesh");
}

}  // namespace transformer_detail

template <class Exec>
Transformer<Exec>::Transformer(Exec& ex, const ModelShape& shape, const BlockPlan& plan,
                            std::uint64_t seed, bool trainable)
    : ex_(ex),
      torus_(ex.torus()),
      space_(ex.compute_space()),
      shape_(shape),
      plan_(plan),
      trainable_(trainable),
      small_((transformer_detail::check_shape(shape, ex.mesh_rows(), ex.mesh_cols()),
              std::max(shape.tokens() / ex.mesh_rows(), shape.hidden / ex.mesh_cols()))) {
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
      out_t_[k] = activation(Layout::transposed, fc_outputs(shape, kind), "fc_output_t", memory_.work);
    if (p.input() == Layout::transposed && trainable)
      in_t_[k] = activation(Layout::transposed, fc_inputs(shape, kind), "fc_input_grad_t", memory_.work);
  }
  attention_ = {shape.sequences / ex.mesh_rows(), shape.seq_len, shape.heads / ex.mesh_cols(),
                shape.head_dim()};
  local_attention_ = std::make_unique<LocalAttention<T>>(attention_, trainable);
  attention_work_ = {attention_.forward_work(), attention_.backward_work()};
  memory_.work += local_attention_->bytes();
  const FcPlan &pq = fc_plan(FcKind::qkv), &pa = fc_plan(FcKind::attn_out);
  const FcPlan &p1 = fc_plan(FcKind::ff1), &p2 = fc_plan(FcKind::ff2);
  blocks_.resize(shape.blocks);
  for (std::size_t bi = 0; bi < shape.blocks; ++bi) {
    Block& b = blocks_[bi];
    for (int k = 0; k < kParamKinds; ++k) {
      const ParamKind kind = ParamKind(k);
      const StoredLayout layout = stored_layout(kind);
      const ParamShape logical = param_shape(shape, kind);
      std::size_t rows = logical.rows, cols = logical.cols;
      if (layout.transposed) std::swap(rows, cols);
      if (!is_gain(kind)) rows /= ex.mesh_rows();
      cols /= ex.mesh_cols();
      b.w[k] = alloc(rows, cols, param_kind_name(kind), memory_.parameters);
      fill_parameter(space_, b.w[k], layout, seed, param_stream(bi, kind),
                     parameter_std(shape, kind));
      if (!trainable) continue;
      b.grad[k] = alloc(rows, cols, "gradient", memory_.gradients);
      b.m[k] = alloc(rows, cols, "optimizer_state", memory_.optimizer_state);
      b.v[k] = alloc(rows, cols, "optimizer_state", memory_.optimizer_state);
    }
    b.x_in = activation(Layout::standard, H, "x_in", memory_.activations);
    b.rinv1 = alloc(local_tokens(), 1, "rinv", memory_.activations);
    b.qkv_in = activation(pq.input(), H, "qkv_in", memory_.activations);
    b.qkv = activation(Layout::standard, 3 * H, "qkv", memory_.activations);
    b.p = Buffer<T>("attention_p", attention_.saved_elements());
    memory_.activations += b.p.size() * sizeof(T);
    b.a = activation(Layout::standard, H, "attention", memory_.activations);
    b.ao_in = pa.input() == Layout::standard ? b.a : activation(pa.input(), H, "attn_out_in", memory_.activations);
    b.x_mid = activation(Layout::standard, H, "x_mid", memory_.activations);
    b.rinv2 = alloc(local_tokens(), 1, "rinv", memory_.activations);
    b.ff1_in = activation(p1.input(), H, "ff1_in", memory_.activations);
    b.u = activation(p1.output(), shape.ffn(), "ff1_out", memory_.activations);
    b.ff2_in = activation(p2.input(), shape.ffn(), "ff2_in", memory_.activations);
  }
  h_ = activation(Layout::standard, H, "normed", memory_.work);
  o_ = activation(Layout::standard, H, "fc_output", memory_.work);
  ss_ = alloc(local_tokens(), 1, "rms_sums", memory_.work);
  if (p2.input() != p1.output()) z_ = activation(p1.output(), shape.ffn(), "gelu_out", memory_.work);
  if (trainable) {
    dot_ = alloc(local_tokens(), 1, "rms_dots", memory_.work);
    gain_tiles_ = alloc(gain_tiles(local_tokens()), local_hidden(), "rms_gain_tiles", memory_.work);
    g_mid_ = activation(Layout::standard, H, "grad_x_mid", memory_.work);
    g_h_ = activation(Layout::standard, H, "grad_normed", memory_.work);
    g_a_ = activation(Layout::standard, H, "grad_attention", memory_.work);
    g_qkv_ = activation(Layout::standard, 3 * H, "grad_qkv", memory_.work);
    g_u_ = activation(p1.output(), shape.ffn(), "grad_ff1_out", memory_.work);
    if (p2.input() != p1.output()) g_z_ = activation(p2.input(), shape.ffn(), "grad_ff2_in", memory_.work);
    g_x_[0] = activation(Layout::standard, H, "grad_x", memory_.work);
    g_x_[1] = activation(Layout::standard, H, "grad_x", memory_.work);
    std::vector<MatrixShape> shapes;
    for (std::size_t bi = shape.blocks; bi-- > 0;)
      for (ParamKind kind : transformer_detail::kBackwardOrder) {
        const Mat& g = blocks_[bi].grad[static_cast<int>(kind)];
        shapes.push_back({g.extent(0), g.extent(1)});
      }
    sync_ = std::make_unique<GradientSync<Exec>>(ex, std::move(shapes));
  }
  // Plan the re-layouts the block plan needs, both ways (sizes checked here, not in the first
  // step; nothing is allocated during a step).
  const auto plan_relayouts = [this](std::size_t width) {
    transpose_for(Layout::standard, width);
    transpose_for(Layout::transposed, width);
  };
  for (int k = 0; k < kFcKinds; ++k) {
    if (plan_[k].input() == Layout::transposed) plan_relayouts(fc_inputs(shape, FcKind(k)));
    if (plan_[k].output() == Layout::transposed) plan_relayouts(fc_outputs(shape, FcKind(k)));
  }
  if (p2.input() != p1.output()) plan_relayouts(shape.ffn());
  for (const auto& l : layers_) memory_.workspaces += l->workspace_bytes();
  for (const auto& [key, transpose] : transposes_) memory_.workspaces += transpose->bytes();
  if (sync_) memory_.workspaces += sync_->workspace_bytes();
  fence(space_, "transformer_init");
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
  return Mat(std::string(label), rows, cols);
}

template <class Exec>
typename Transformer<Exec>::Mat Transformer<Exec>::activation(Layout layout, std::size_t width,
                                                        const char* label, std::size_t& use) {
  const std::size_t pr = ex_.mesh_rows(), pc = ex_.mesh_cols(), t = shape_.tokens();
  if (layout == Layout::standard) return alloc(t / pr, width / pc, label, use);
  return alloc(width / pr, t / pc, label, use);
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
BlockTranspose<typename Transformer<Exec>::T>& Transformer<Exec>::transpose_for(
    Layout from, std::size_t width) {
  const std::size_t t = shape_.tokens();
  const auto key = from == Layout::standard ? std::make_pair(t, width) : std::make_pair(width, t);
  auto& slot = transposes_[key];
  if (!slot) slot = std::make_unique<BlockTranspose<T>>(torus_, key.first, key.second);
  return *slot;
}

template <class Exec>
void Transformer<Exec>::relayout(const Mat& src, Layout from, std::size_t width, const Mat& dst) {
  BlockTranspose<T>& transpose = transpose_for(from, width);
  const double elements = static_cast<double>(transpose.elements_sent());
  ex_.communicate("relayout", Axis::tp, {CommWork::all_to_all, elements},
                  [&] { transpose.run(space_, src, dst); });
  relayouts_.count += 1;
  relayouts_.bytes += elements * sizeof(T);
}

template <class Exec>
const typename Transformer<Exec>::Mat& Transformer<Exec>::in_layout(const Mat& src, Layout want,
                                                              std::size_t width, const Mat& dst) {
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
  const double n = static_cast<double>(x.size());
  ex_.compute("rmsnorm", LocalWork::streaming(n), [&] { row_sum_squares(space_, x, ss_); });
  sum_small(Axis::col, ss_);  // over the hidden dimension
  ex_.compute("rmsnorm", LocalWork::streaming(2 * n),
              [&] { rmsnorm_apply(space_, x, ss_, gain, shape_.hidden, rinv, h); });
}

template <class Exec>
void Transformer<Exec>::norm_backward(const Mat& dh, const Mat& x, const Mat& gain, const Mat& rinv,
                                   const Mat& dx, const Mat& dgain) {
  const double n = static_cast<double>(x.size());
  ex_.compute("rmsnorm_backward", LocalWork::streaming(2 * n),
              [&] {
                rmsnorm_backward_partials(space_, dh, x, gain, rinv, dot_, dgain, gain_tiles_);
              });
  sum_small(Axis::col, dot_);  // over the hidden dimension
  sum_small(Axis::row, dgain);  // over the tokens
  ex_.compute("rmsnorm_backward", LocalWork::streaming(4 * n), [&] {
    rmsnorm_backward_apply(space_, dh, x, gain, rinv, dot_, shape_.hidden, dx);
  });
}

template <class Exec>
void Transformer<Exec>::sum_small(Axis axis, const Mat& x) {
  ex_.communicate("norm_all_reduce", axis, {CommWork::all_reduce, static_cast<double>(x.size())},
                  [&] { small_.sum(space_, torus_.axis(axis), x); });
}

template <class Exec>
void Transformer<Exec>::residual(const Mat& out, const Mat& x, const Mat& delta) {
  // A copy, then an add that reads both and writes the sum.
  const double n = static_cast<double>(out.size());
  ex_.compute("residual", LocalWork::streaming(delta.data() ? 5 * n : 2 * n), [&] {
    Kokkos::deep_copy(space_, out, x);
    if (delta.data()) add_into(space_, out, delta);
  });
}

template <class Exec>
void Transformer<Exec>::forward(const Mat& x, const Mat& y) {
  require(x.extent(0) == local_tokens() && x.extent(1) == local_hidden() &&
              y.extent(0) == local_tokens() && y.extent(1) == local_hidden(),
          "Transformer::forward: shards must be ", local_tokens(), "x", local_hidden());
  residual(blocks_[0].x_in, x, Mat());
  for (std::size_t bi = 0; bi < blocks_.size(); ++bi)
    block_forward(blocks_[bi], bi + 1 < blocks_.size() ? blocks_[bi + 1].x_in : y);
  fence(space_, "transformer_forward");
}

template <class Exec>
void Transformer<Exec>::block_forward(Block& b, const Mat& out) {
  const std::size_t H = shape_.hidden, F = shape_.ffn();
  const FcPlan &pa = fc_plan(FcKind::attn_out), &p1 = fc_plan(FcKind::ff1);
  const FcPlan& p2 = fc_plan(FcKind::ff2);
  auto w = [&b](ParamKind kind) -> const Mat& { return b.w[static_cast<int>(kind)]; };

  // Attention half: norm, QKV, local attention, output projection, residual.
  norm_into_input(FcKind::qkv, b.x_in, w(ParamKind::norm1_gain), b.rinv1, b.qkv_in);
  forward_to_standard(FcKind::qkv, b.qkv_in, w(ParamKind::qkv), b.qkv);
  ex_.compute("attention", attention_work_[0],
              [&] { local_attention_->forward(space_, b.qkv, b.p, b.a); });
  in_layout(b.a, pa.input(), H, b.ao_in);
  forward_to_standard(FcKind::attn_out, b.ao_in, w(ParamKind::attn_out), o_);
  residual(b.x_mid, b.x_in, o_);

  // Feed-forward half: norm, FF1, GeLU (in FF1's output layout), FF2, residual.
  norm_into_input(FcKind::ff1, b.x_mid, w(ParamKind::norm2_gain), b.rinv2, b.ff1_in);
  fc_forward(FcKind::ff1, b.ff1_in, w(ParamKind::ff1), b.u);
  produce_into(p1.output(), p2.input(), F, z_, b.ff2_in, [&](const Mat& z) {
    ex_.compute("gelu", LocalWork::streaming(2.0 * z.size()),
                [&] { gelu_forward(space_, b.u, z); });
  });
  forward_to_standard(FcKind::ff2, b.ff2_in, w(ParamKind::ff2), o_);
  residual(out, b.x_mid, o_);
}

template <class Exec>
void Transformer<Exec>::backward(const Mat& dy) {
  require(trainable_, "Transformer::backward on a model built without gradients");
  require(dy.extent(0) == local_tokens() && dy.extent(1) == local_hidden(),
          "Transformer::backward: dy must be ", local_tokens(), "x", local_hidden());
  sync_->begin_step();
  const Mat* dout = &dy;
  for (std::size_t bi = blocks_.size(); bi-- > 0;) {
    const Mat& din = g_x_[(blocks_.size() - 1 - bi) % 2];
    block_backward(blocks_[bi], *dout, din);
    dout = &din;
  }
}

template <class Exec>
void Transformer<Exec>::start_sync(const Mat& gradient) {
  sync_->start(sync_->started(), ex_.wrap(gradient));
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
void Transformer<Exec>::fc_backward_weight(FcKind k, const Mat& x, const Mat& dy, const Mat& dw) {
  layer(k).backward_weight(ex_.wrap(x), ex_.wrap(dy), ex_.wrap(dw), /*accumulate=*/false);
}

template <class Exec>
void Transformer<Exec>::block_backward(Block& b, const Mat& dout, const Mat& din) {
  const std::size_t F = shape_.ffn();
  const FcPlan &p1 = fc_plan(FcKind::ff1), &p2 = fc_plan(FcKind::ff2);
  auto w = [&b](ParamKind kind) -> const Mat& { return b.w[static_cast<int>(kind)]; };
  auto grad = [&b](ParamKind kind) -> const Mat& { return b.grad[static_cast<int>(kind)]; };

  // FF2, GeLU, FF1 (each weight gradient first, so its dp averaging overlaps the data GEMM).
  const Mat& dy2 = output_gradient(FcKind::ff2, dout);
  fc_backward_weight(FcKind::ff2, b.ff2_in, dy2, grad(ParamKind::ff2));
  start_sync(grad(ParamKind::ff2));
  produce_into(p2.input(), p1.output(), F, g_z_, g_u_, [&](const Mat& du) {
    fc_backward_data(FcKind::ff2, dy2, w(ParamKind::ff2), du);
  });
  ex_.compute("gelu_backward", LocalWork::streaming(3.0 * g_u_.size()),
              [&] { gelu_backward(space_, b.u, g_u_); });
  fc_backward_weight(FcKind::ff1, b.ff1_in, g_u_, grad(ParamKind::ff1));
  start_sync(grad(ParamKind::ff1));
  backward_data_to_standard(FcKind::ff1, g_u_, w(ParamKind::ff1), g_h_);
  residual(g_mid_, dout, Mat());  // the residual path
  norm_backward(g_h_, b.x_mid, w(ParamKind::norm2_gain), b.rinv2, g_mid_,
                grad(ParamKind::norm2_gain));
  start_sync(grad(ParamKind::norm2_gain));

  // Output projection, attention, QKV.
  const Mat& dyo = output_gradient(FcKind::attn_out, g_mid_);
  fc_backward_weight(FcKind::attn_out, b.ao_in, dyo, grad(ParamKind::attn_out));
  start_sync(grad(ParamKind::attn_out));
  backward_data_to_standard(FcKind::attn_out, dyo, w(ParamKind::attn_out), g_a_);
  ex_.compute("attention_backward", attention_work_[1],
              [&] { local_attention_->backward(space_, b.qkv, b.a, g_a_, b.p, g_qkv_); });
  const Mat& dyq = output_gradient(FcKind::qkv, g_qkv_);
  fc_backward_weight(FcKind::qkv, b.qkv_in, dyq, grad(ParamKind::qkv));
  start_sync(grad(ParamKind::qkv));
  backward_data_to_standard(FcKind::qkv, dyq, w(ParamKind::qkv), g_h_);
  residual(din, g_mid_, Mat());
  norm_backward(g_h_, b.x_in, w(ParamKind::norm1_gain), b.rinv1, din, grad(ParamKind::norm1_gain));
  start_sync(grad(ParamKind::norm1_gain));
}

template <class Exec>
double Transformer<Exec>::update(const OptimizerSettings& optimizer, std::size_t t) {
  require(trainable_, "Transformer::update on a model built without gradients");
  sync_->finish();
  // The global gradient norm: weight shards are disjoint over the tensor-parallel chips; the
  // gains are copied on every mesh row, so only row 0 counts them.
  double local = 0;
  const double elements = static_cast<double>(memory_.gradients / sizeof(T));  // every gradient
  ex_.compute("gradient_norm", LocalWork::streaming(elements), [&] {
    for (const Block& b : blocks_)
      for (int k = 0; k < kParamKinds; ++k)
        if (!is_gain(ParamKind(k)) || ex_.coord(Axis::row) == 0)
          local += sum_squares(space_, b.grad[k]);
  });
  double squares = 0;
  ex_.communicate("gradient_norm", Axis::tp, {CommWork::all_reduce, 1},
                  [&] { squares = sum_over(torus_.axis(Axis::tp), local); });
  const double norm = std::sqrt(squares);
  const double clip = clip_factor(optimizer, norm);
  // Reads weight, gradient and state, writes weight and state: 7 (AdamW) or 5 (SGD) per element.
  const double per_element = optimizer.kind == OptimizerKind::sgd ? 5 : 7;
  ex_.compute("optimizer", LocalWork::streaming(per_element * elements), [&] {
    for (Block& b : blocks_)
      for (int k = 0; k < kParamKinds; ++k) {
        const UpdateScalars u = update_scalars(optimizer, t, clip, !is_gain(ParamKind(k)));
        if (optimizer.kind == OptimizerKind::sgd)
          sgd_step(space_, u, b.w[k], b.grad[k], b.m[k]);
        else
          adamw_step(space_, u, b.w[k], b.grad[k], b.m[k], b.v[k]);
      }
    fence(space_, "optimizer_step");
  });
  return norm;
}

template <class Exec>
std::vector<double> Transformer<Exec>::gather(std::size_t block, ParamKind kind) const {
  const ParamShape logical = param_shape(shape_, kind);
  std::vector<double> global(logical.rows * logical.cols, 0.0);
  const Mat& shard = blocks_.at(block).w[static_cast<int>(kind)];
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), shard);
  const StoredLayout layout = stored_layout(kind);
  if (!is_gain(kind) || ex_.coord(Axis::row) == 0)
    for (std::size_t r = 0; r < host.extent(0); ++r)
      for (std::size_t c = 0; c < host.extent(1); ++c) {
        std::size_t row = 0, col = 0;
        layout.logical(r, c, row, col);
        global[row * logical.cols + col] = static_cast<double>(host(r, c));
      }
  MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_SUM,
                torus_.axis(Axis::tp).comm());
  return global;
}


}  // namespace meshslice
