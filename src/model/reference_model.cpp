#include "model/reference_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"
#include "model/block_layers.hpp"
#include "model/counter_random.hpp"
#include "model/model_math.hpp"
#include "model/reference_kernels.hpp"
#include "parameters/optimizers/schedule.hpp"

namespace meshslice {

namespace {

using namespace reference;

// The block's parameters the reference's formulas name, by their modules' enums.
struct BlockParamNames {
  ParamKind norm1 = block_param(AttentionParam::norm_gain), qkv = block_param(AttentionParam::qkv),
            attn_out = block_param(AttentionParam::out), norm2 = block_param(MlpParam::norm_gain),
            ff1 = block_param(MlpParam::ff1), ff2 = block_param(MlpParam::ff2);
};

// Where q, k, v of (token, query head) start in a row of qkv ([q | k | v], H + 2 KV wide: query
// head h reads key and value head h / group), and the row-major index of the attention
// probability p_ij of (sequence, head).
struct AttentionIndex {
  std::size_t hidden, kv_hidden, heads, group, head_dim, seq_len;
  std::size_t row(std::size_t token) const { return token * (hidden + 2 * kv_hidden); }
  std::size_t q(std::size_t token, std::size_t head) const { return row(token) + head * head_dim; }
  std::size_t k(std::size_t token, std::size_t head) const {
    return row(token) + hidden + (head / group) * head_dim;
  }
  std::size_t v(std::size_t token, std::size_t head) const { return k(token, head) + kv_hidden; }
  std::size_t p(std::size_t sequence, std::size_t head, std::size_t i, std::size_t j) const {
    return ((sequence * heads + head) * seq_len + i) * seq_len + j;
  }
};

AttentionIndex attention_index(const ModelShape& s) {
  return {s.hidden, s.kv_hidden(), s.heads, s.heads / s.kv(), s.head_dim(), s.seq_len};
}

// Causal softmax attention of every sequence and head; keeps the probabilities (zero above the
// diagonal) for the backward pass. out is tokens x H, column head * head_dim + d.
template <class T>
void attention(const std::vector<T>& qkv, const ModelShape& shape, std::size_t tokens,
               std::vector<T>& probs, std::vector<T>& out) {
  const AttentionIndex at = attention_index(shape);
  const std::size_t sequences = tokens / shape.seq_len;
  const T scale = T(1) / std::sqrt(T(at.head_dim));
  probs.assign(sequences * at.heads * at.seq_len * at.seq_len, T(0));
  out.assign(tokens * at.hidden, T(0));
  std::vector<T> scores(at.seq_len);
  for (std::size_t s = 0; s < sequences; ++s)
    for (std::size_t head = 0; head < at.heads; ++head)
      for (std::size_t i = 0; i < at.seq_len; ++i) {
        const std::size_t ti = s * at.seq_len + i;
        T max_score = -std::numeric_limits<T>::infinity();
        for (std::size_t j = 0; j <= i; ++j) {
          const std::size_t tj = s * at.seq_len + j;
          T dot = 0;
          for (std::size_t d = 0; d < at.head_dim; ++d)
            dot += qkv[at.q(ti, head) + d] * qkv[at.k(tj, head) + d];
          scores[j] = dot * scale;
          max_score = std::max(max_score, scores[j]);
        }
        T sum = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          scores[j] = std::exp(scores[j] - max_score);
          sum += scores[j];
        }
        T* a = &out[ti * at.hidden + head * at.head_dim];
        for (std::size_t j = 0; j <= i; ++j) {
          const T p = scores[j] / sum;
          probs[at.p(s, head, i, j)] = p;
          const std::size_t tj = s * at.seq_len + j;
          for (std::size_t d = 0; d < at.head_dim; ++d) a[d] += p * qkv[at.v(tj, head) + d];
        }
      }
}

// Adds the gradient of qkv given d_out. Per row i: dp_ij = d_out_i . v_j, dv_j += p_ij d_out_i,
// dscore_ij = p_ij (dp_ij - sum_l p_il dp_il) (softmax), dq_i += scale dscore_ij k_j,
// dk_j += scale dscore_ij q_i.
template <class T>
void attention_backward(const std::vector<T>& qkv, const std::vector<T>& probs,
                        const std::vector<T>& d_out, const ModelShape& shape, std::size_t tokens,
                        std::vector<T>& dqkv) {
  const AttentionIndex at = attention_index(shape);
  const std::size_t sequences = tokens / shape.seq_len;
  const T scale = T(1) / std::sqrt(T(at.head_dim));
  std::vector<T> dp(at.seq_len);
  for (std::size_t s = 0; s < sequences; ++s)
    for (std::size_t head = 0; head < at.heads; ++head)
      for (std::size_t i = 0; i < at.seq_len; ++i) {
        const std::size_t ti = s * at.seq_len + i;
        const T* da = &d_out[ti * at.hidden + head * at.head_dim];
        T weighted = 0;  // sum_l p_il dp_il
        for (std::size_t j = 0; j <= i; ++j) {
          const std::size_t tj = s * at.seq_len + j;
          const T p = probs[at.p(s, head, i, j)];
          T dot = 0;
          for (std::size_t d = 0; d < at.head_dim; ++d) {
            dot += da[d] * qkv[at.v(tj, head) + d];
            dqkv[at.v(tj, head) + d] += p * da[d];
          }
          dp[j] = dot;
          weighted += p * dot;
        }
        for (std::size_t j = 0; j <= i; ++j) {
          const std::size_t tj = s * at.seq_len + j;
          const T dscore = probs[at.p(s, head, i, j)] * (dp[j] - weighted) * scale;
          for (std::size_t d = 0; d < at.head_dim; ++d) {
            dqkv[at.q(ti, head) + d] += dscore * qkv[at.k(tj, head) + d];
            dqkv[at.k(tj, head) + d] += dscore * qkv[at.q(ti, head) + d];
          }
        }
      }
}

// RoPE on the q and k columns of qkv, in place: in each head of q and of k, dimensions d and
// d + dim/2 of the token at position i of its sequence turn by i * kRopeBase^(-2d/dim);
// `inverse` turns them back (what the gradient of the turned q and k needs).
template <class T>
void rotate_positions(std::vector<T>& qkv, const ModelShape& shape, std::size_t tokens,
                      bool inverse) {
  const AttentionIndex at = attention_index(shape);
  const std::size_t half = at.head_dim / 2;
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t d = 0; d < half; ++d) {
      const double angle = static_cast<double>(t % shape.seq_len) *
                           std::exp(-2.0 * static_cast<double>(d) /
                                    static_cast<double>(at.head_dim) * std::log(kRopeBase));
      const T c = static_cast<T>(std::cos(angle));
      const T sn = static_cast<T>((inverse ? -1.0 : 1.0) * std::sin(angle));
      const auto turn = [&](std::size_t first) {
        const T x1 = qkv[first + d], x2 = qkv[first + d + half];
        qkv[first + d] = x1 * c - x2 * sn;
        qkv[first + d + half] = x2 * c + x1 * sn;
      };
      for (std::size_t head = 0; head < at.heads; ++head) turn(at.q(t, head));
      // Each key head once: the one of query heads g * group ... (g + 1) * group - 1.
      for (std::size_t head = 0; head < at.heads; head += at.group) turn(at.k(t, head));
    }
}

void check_batch(const ModelShape& shape, std::size_t x_size, std::size_t tokens) {
  require(tokens > 0 && tokens % shape.seq_len == 0, "reference model: ", tokens,
          " tokens are not a whole number of sequences of ", shape.seq_len);
  require(x_size == tokens * shape.hidden, "reference model: the input has ", x_size,
          " elements, expected tokens x hidden = ", tokens, " x ", shape.hidden);
}

}  // namespace

template <class T>
struct ReferenceModel<T>::Activations {
  std::vector<T> x_in, inv_rms1, h1, qkv, probs, attn;  // attention half (RoPE: q, k turned)
  std::vector<T> x_mid, inv_rms2, h2, u, z;             // feed-forward half (z = act(u))
};

template <class T>
ReferenceModel<T>::ReferenceModel(const ModelShape& shape, std::uint64_t seed) : shape_(shape) {
  require(shape.heads > 0 && shape.hidden % shape.heads == 0, "reference model: heads (",
          shape.heads, ") must divide hidden (", shape.hidden, ")");
  require(shape.heads % shape.kv() == 0, "reference model: kv_heads (", shape.kv(),
          ") must divide heads (", shape.heads, ")");
  require(!shape.rope || shape.head_dim() % 2 == 0,
          "reference model: RoPE needs an even head "
          "size, not ",
          shape.head_dim());
  for (std::size_t b = 0; b < shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds()) {
      const ParamShape ps = param_shape(shape, kind);
      const double std_dev = parameter_std(shape, kind);
      std::vector<T> p(ps.rows * ps.cols);
      for (std::size_t r = 0; r < ps.rows; ++r)
        for (std::size_t c = 0; c < ps.cols; ++c)
          p[r * ps.cols + c] =
              static_cast<T>(init_value(seed, param_stream(b, kind), std_dev, r, c));
      params_.push_back(p);
      grads_.emplace_back(p.size(), T(0));
      states_.emplace_back();
    }
}

template <class T>
std::size_t ReferenceModel<T>::index(std::size_t block, ParamKind kind) const {
  require(block < shape_.blocks, "reference model: block ", block, " of ", shape_.blocks);
  return block * block_param_count() + static_cast<std::size_t>(kind);
}

template <class T>
const std::vector<T>& ReferenceModel<T>::param(std::size_t block, ParamKind kind) const {
  return params_[index(block, kind)];
}

template <class T>
std::vector<T>& ReferenceModel<T>::param(std::size_t block, ParamKind kind) {
  return params_[index(block, kind)];
}

template <class T>
const std::vector<T>& ReferenceModel<T>::gradient(std::size_t block, ParamKind kind) const {
  return grads_[index(block, kind)];
}

template <class T>
std::vector<T> ReferenceModel<T>::forward(const std::vector<T>& x, std::size_t tokens) const {
  return run_forward(x, tokens, nullptr);
}

template <class T>
std::vector<T> ReferenceModel<T>::run_forward(const std::vector<T>& x_in, std::size_t tokens,
                                              std::vector<Activations>* saved) const {
  check_batch(shape_, x_in.size(), tokens);
  const std::size_t n = tokens, hidden = shape_.hidden, ffn = shape_.ffn();
  const std::size_t ff1_out = shape_.dims().ff1_outputs(), qkv_out = shape_.dims().qkv_outputs();
  if (saved) saved->resize(shape_.blocks);
  Activations scratch;
  const BlockParamNames k;
  std::vector<T> x = x_in;
  for (std::size_t b = 0; b < shape_.blocks; ++b) {
    Activations& a = saved ? (*saved)[b] : scratch;
    a.x_in = x;
    rms_norm(x, param(b, k.norm1), n, hidden, a.h1, a.inv_rms1);
    a.qkv.assign(n * qkv_out, T(0));
    add_ab(a.h1, param(b, k.qkv), a.qkv, n, hidden, qkv_out, bf16_gemm_);
    if (bf16_gemm_) a.qkv = rounded_to_bf16(a.qkv);  // kept so, as a bf16 run's model keeps it
    if (shape_.rope) rotate_positions(a.qkv, shape_, n, /*inverse=*/false);  // kept turned
    attention(a.qkv, shape_, n, a.probs, a.attn);
    add_ab(a.attn, param(b, k.attn_out), x, n, hidden, hidden, bf16_gemm_);

    a.x_mid = x;
    rms_norm(x, param(b, k.norm2), n, hidden, a.h2, a.inv_rms2);
    a.u.assign(n * ff1_out, T(0));
    add_ab(a.h2, param(b, k.ff1), a.u, n, hidden, ff1_out, bf16_gemm_);
    if (bf16_gemm_) a.u = rounded_to_bf16(a.u);  // kept so, as a bf16 run's model keeps it
    mlp_activation(shape_.mlp, a.u, n, ffn, a.z);
    add_ab(a.z, param(b, k.ff2), x, n, ffn, hidden, bf16_gemm_);
  }
  return x;
}

template <class T>
T ReferenceModel<T>::loss_and_gradients(const std::vector<T>& x, const std::vector<T>& target,
                                        std::size_t tokens) {
  std::vector<Activations> saved;
  const std::vector<T> y = run_forward(x, tokens, &saved);
  require(target.size() == y.size(), "reference model: the target has ", target.size(),
          " elements, the output ", y.size());
  std::vector<T> dy(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) dy[i] = T(2) * (y[i] - target[i]) / T(y.size());
  backward(saved, std::move(dy), tokens);
  return mean_squared_error(y, target);
}

template <class T>
void ReferenceModel<T>::gradients(const std::vector<T>& x, const std::vector<T>& dy,
                                  std::size_t tokens) {
  std::vector<Activations> saved;
  run_forward(x, tokens, &saved);
  require(dy.size() == x.size(), "reference model: the output gradient has ", dy.size(),
          " elements, the output ", x.size());
  backward(saved, dy, tokens);
}

// The forward pass of run_forward in reverse, one block at a time; dx is the gradient of the
// residual stream, which passes each residual connection unchanged.
template <class T>
void ReferenceModel<T>::backward(const std::vector<Activations>& saved, std::vector<T> dx,
                                 std::size_t tokens) {
  const std::size_t n = tokens, hidden = shape_.hidden, ffn = shape_.ffn();
  const std::size_t ff1_out = shape_.dims().ff1_outputs(), qkv_out = shape_.dims().qkv_outputs();
  for (auto& g : grads_) std::fill(g.begin(), g.end(), T(0));
  const BlockParamNames k;
  auto grad = [&](std::size_t b, ParamKind kind) -> std::vector<T>& {
    return grads_[index(b, kind)];
  };
  for (std::size_t b = shape_.blocks; b-- > 0;) {
    const Activations& a = saved[b];
    // x = x_mid + act(h2 W1) W2
    std::vector<T> dz(n * ffn, T(0));
    add_ab_t(dx, param(b, k.ff2), dz, n, ffn, hidden, bf16_gemm_);
    add_a_t_b(a.z, dx, grad(b, k.ff2), n, ffn, hidden, bf16_gemm_);
    const std::vector<T> du = mlp_activation_backward(shape_.mlp, a.u, dz, n, ffn);
    std::vector<T> dh(n * hidden, T(0));
    add_ab_t(du, param(b, k.ff1), dh, n, hidden, ff1_out, bf16_gemm_);
    add_a_t_b(a.h2, du, grad(b, k.ff1), n, hidden, ff1_out, bf16_gemm_);
    rms_norm_backward(a.x_mid, param(b, k.norm2), a.inv_rms2, dh, n, hidden, dx, grad(b, k.norm2));

    // x_mid = x_in + attention(h1 Wqkv) Wo
    std::vector<T> d_attn(n * hidden, T(0));
    add_ab_t(dx, param(b, k.attn_out), d_attn, n, hidden, hidden, bf16_gemm_);
    add_a_t_b(a.attn, dx, grad(b, k.attn_out), n, hidden, hidden, bf16_gemm_);
    std::vector<T> dqkv(n * qkv_out, T(0));
    attention_backward(a.qkv, a.probs, d_attn, shape_, n, dqkv);
    if (shape_.rope) rotate_positions(dqkv, shape_, n, /*inverse=*/true);
    std::fill(dh.begin(), dh.end(), T(0));
    add_ab_t(dqkv, param(b, k.qkv), dh, n, hidden, qkv_out, bf16_gemm_);
    add_a_t_b(a.h1, dqkv, grad(b, k.qkv), n, hidden, qkv_out, bf16_gemm_);
    rms_norm_backward(a.x_in, param(b, k.norm1), a.inv_rms1, dh, n, hidden, dx, grad(b, k.norm1));
  }
  input_gradient_ = std::move(dx);
}

template <class T>
double ReferenceModel<T>::step(const OptimizerSettings& o, std::size_t t) {
  const double norm = std::sqrt(gradient_sum_squares());
  apply_update(o, t, clip_factor(o, norm));
  return norm;
}

template <class T>
double ReferenceModel<T>::gradient_sum_squares() const {
  return sum_of_squares(grads_);
}

template <class T>
void ReferenceModel<T>::apply_update(const OptimizerSettings& o, std::size_t t, double clip) {
  for (std::size_t b = 0; b < shape_.blocks; ++b)
    for (ParamKind kind : block_param_kinds()) {
      const std::size_t i = index(b, kind);
      const ParamShape ps = param_shape(shape_, kind);
      update_tensor(o, t, clip, /*decayed=*/!is_gain(kind), ps.rows, ps.cols, params_[i], grads_[i],
                    states_[i]);
    }
}

template <class T>
T mean_squared_error(const std::vector<T>& y, const std::vector<T>& target) {
  double sum = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double d = static_cast<double>(y[i]) - static_cast<double>(target[i]);
    sum += d * d;
  }
  return static_cast<T>(sum / static_cast<double>(y.size()));
}

template <class T>
std::vector<T> make_inputs(std::uint64_t data_seed, std::uint64_t stream, std::size_t first_token,
                           std::size_t tokens, std::size_t hidden) {
  std::vector<T> x(tokens * hidden);
  for (std::size_t i = 0; i < tokens; ++i)
    for (std::size_t c = 0; c < hidden; ++c)
      x[i * hidden + c] = static_cast<T>(counter_normal(data_seed, stream, first_token + i, c));
  return x;
}

template <class T>
ReferenceTrainer<T>::ReferenceTrainer(const ModelShape& shape, const TaskSeeds& seeds,
                                      const OptimizerSettings& optimizer)
    : seeds_(seeds),
      optimizer_(optimizer),
      student_(shape, seeds.student),
      teacher_(shape, seeds.teacher) {}

template <class T>
T ReferenceTrainer<T>::train_step(std::size_t global_tokens) {
  const std::vector<T> x = make_inputs<T>(seeds_.data, train_input_stream(steps_done_), 0,
                                          global_tokens, student_.shape().hidden);
  const T loss = student_.loss_and_gradients(x, teacher_.forward(x, global_tokens), global_tokens);
  ++steps_done_;
  last_gradient_norm_ = student_.step(optimizer_, steps_done_);
  return loss;
}

template <class T>
T ReferenceTrainer<T>::eval_loss(std::size_t batches, std::size_t tokens) const {
  require(batches > 0, "reference trainer: evaluation needs at least one batch");
  double sum = 0;
  for (std::size_t batch = 0; batch < batches; ++batch) {
    const std::vector<T> x =
        make_inputs<T>(seeds_.data, eval_input_stream(batch), 0, tokens, student_.shape().hidden);
    sum += mean_squared_error(student_.forward(x, tokens), teacher_.forward(x, tokens));
  }
  return static_cast<T>(sum / static_cast<double>(batches));
}

#define MESHSLICE_INSTANTIATE_REFERENCE(T)                                                       \
  template class ReferenceModel<T>;                                                              \
  template class ReferenceTrainer<T>;                                                            \
  template T mean_squared_error<T>(const std::vector<T>&, const std::vector<T>&);                \
  template std::vector<T> make_inputs<T>(std::uint64_t, std::uint64_t, std::size_t, std::size_t, \
                                         std::size_t);
MESHSLICE_INSTANTIATE_REFERENCE(double)
MESHSLICE_INSTANTIATE_REFERENCE(float)
#undef MESHSLICE_INSTANTIATE_REFERENCE

}  // namespace meshslice
