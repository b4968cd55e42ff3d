#include "model/reference_lm.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "model/model_math.hpp"
#include "model/reference_kernels.hpp"
#include "parameters/optimizers/schedule.hpp"

namespace meshslice {

template <class T>
std::vector<T> reference_embedding(const std::vector<T>& table, std::size_t hidden,
                                   const std::vector<int>& ids) {
  std::vector<T> x(ids.size() * hidden);
  for (std::size_t t = 0; t < ids.size(); ++t)
    std::copy_n(table.begin() + static_cast<std::ptrdiff_t>(std::size_t(ids[t]) * hidden), hidden,
                x.begin() + static_cast<std::ptrdiff_t>(t * hidden));
  return x;
}

template <class T>
void reference_embedding_gradient(const std::vector<T>& dx, std::size_t hidden,
                                  const std::vector<int>& ids, std::vector<T>& dtable) {
  for (std::size_t t = 0; t < ids.size(); ++t)
    for (std::size_t c = 0; c < hidden; ++c)
      dtable[static_cast<std::size_t>(ids[t]) * hidden + c] += dx[t * hidden + c];
}

template <class T>
double reference_cross_entropy(const std::vector<T>& logits, std::size_t vocab,
                               const std::vector<int>& targets, double scale,
                               std::vector<T>& dlogits) {
  dlogits.assign(logits.size(), T(0));
  double loss = 0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const T* row = &logits[t * vocab];
    const T max = *std::max_element(row, row + vocab);
    T sum = 0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
    const std::size_t target = static_cast<std::size_t>(targets[t]);
    loss += static_cast<double>(std::log(sum) + max - row[target]);
    for (std::size_t v = 0; v < vocab; ++v)
      dlogits[t * vocab + v] =
          static_cast<T>(scale) * (std::exp(row[v] - max) / sum - (v == target ? T(1) : T(0)));
  }
  return loss;
}

template <class T>
struct ReferenceLm<T>::Forward {
  std::vector<T> x, y, h, inv_rms, logits, dlogits;
  T loss = 0;
};

template <class T>
ReferenceLm<T>::ReferenceLm(const ModelShape& shape, std::uint64_t seed)
    : blocks_(shape, seed), params_(3), grads_(3), states_(3) {
  require(shape.vocab > 0, "reference language model: model.vocab must be positive");
  for (LmParam p : {LmParam::embedding, LmParam::final_norm_gain, LmParam::lm_head}) {
    if (p == LmParam::lm_head && shape.tied_head) continue;
    const ParamShape ps = lm_param_shape(shape, p);
    std::vector<T>& values = params_[static_cast<std::size_t>(p)];
    values.resize(ps.rows * ps.cols);
    for (std::size_t r = 0; r < ps.rows; ++r)
      for (std::size_t c = 0; c < ps.cols; ++c)
        values[r * ps.cols + c] =
            static_cast<T>(init_value(seed, lm_param_stream(p), lm_param_std(shape, p), r, c));
    grads_[static_cast<std::size_t>(p)].assign(values.size(), T(0));
  }
}

template <class T>
std::size_t ReferenceLm<T>::index(LmParam p) const {
  require(p != LmParam::lm_head || !shape().tied_head,
          "reference language model: a tied head is the embedding");
  return static_cast<std::size_t>(p);
}

template <class T>
std::vector<T>& ReferenceLm<T>::param(LmParam p) {
  return params_[index(p)];
}

template <class T>
const std::vector<T>& ReferenceLm<T>::gradient(LmParam p) const {
  return grads_[index(p)];
}

template <class T>
typename ReferenceLm<T>::Forward ReferenceLm<T>::forward(const std::vector<int>& ids,
                                                         const std::vector<int>& targets) const {
  const ModelShape& s = shape();
  const std::size_t n = ids.size(), hidden = s.hidden, vocab = s.vocab;
  require(targets.size() == n, "reference language model: ", n, " tokens, ", targets.size(),
          " targets");
  Forward f;
  f.x = reference_embedding(params_[0], hidden, ids);
  f.y = blocks_.forward(f.x, n);
  reference::rms_norm(f.y, params_[1], n, hidden, f.h, f.inv_rms);
  f.logits.assign(n * vocab, T(0));
  const bool bf16 = blocks_.rounds_gemm_operands();
  if (s.tied_head)  // logits = h E^T, E the vocab x hidden table
    reference::add_ab_t(f.h, params_[0], f.logits, n, vocab, hidden, bf16);
  else
    reference::add_ab(f.h, params_[2], f.logits, n, hidden, vocab, bf16);
  const double scale = 1.0 / static_cast<double>(n);
  f.loss =
      static_cast<T>(reference_cross_entropy(f.logits, vocab, targets, scale, f.dlogits) * scale);
  return f;
}

template <class T>
std::vector<T> ReferenceLm<T>::logits(const std::vector<int>& ids) const {
  return forward(ids, std::vector<int>(ids.size(), 0)).logits;
}

template <class T>
int ReferenceLm<T>::next_token(const std::vector<int>& sequence, std::size_t position,
                               const TokenSampling& sampling, std::uint64_t draw) const {
  const std::size_t vocab = shape().vocab;
  const std::vector<T> scores = logits(sequence);
  int best = 0;
  double best_score = -1e300;
  for (std::size_t id = 0; id < vocab; ++id) {
    const double score =
        token_score(sampling, draw, id, static_cast<double>(scores[position * vocab + id]));
    if (score > best_score) {
      best_score = score;
      best = static_cast<int>(id);
    }
  }
  return best;
}

template <class T>
T ReferenceLm<T>::loss(const std::vector<int>& ids, const std::vector<int>& targets) const {
  return forward(ids, targets).loss;
}

template <class T>
T ReferenceLm<T>::loss_and_gradients(const std::vector<int>& ids, const std::vector<int>& targets) {
  const ModelShape& s = shape();
  const std::size_t n = ids.size(), hidden = s.hidden, vocab = s.vocab;
  const Forward f = forward(ids, targets);
  for (auto& g : grads_) std::fill(g.begin(), g.end(), T(0));
  std::vector<T> dh(n * hidden, T(0));
  std::vector<T>& dtable = grads_[0];
  const bool bf16 = blocks_.rounds_gemm_operands();
  if (s.tied_head) {  // dh = dlogits E, dE += dlogits^T h
    reference::add_ab(f.dlogits, params_[0], dh, n, vocab, hidden, bf16);
    reference::add_a_t_b(f.dlogits, f.h, dtable, n, vocab, hidden, bf16);
  } else {
    reference::add_ab_t(f.dlogits, params_[2], dh, n, hidden, vocab, bf16);
    reference::add_a_t_b(f.h, f.dlogits, grads_[2], n, hidden, vocab, bf16);
  }
  std::vector<T> dy(n * hidden, T(0));
  reference::rms_norm_backward(f.y, params_[1], f.inv_rms, dh, n, hidden, dy, grads_[1]);
  blocks_.gradients(f.x, dy, n);
  reference_embedding_gradient(blocks_.input_gradient(), hidden, ids, dtable);
  return f.loss;
}

template <class T>
double ReferenceLm<T>::step(const OptimizerSettings& o, std::size_t t) {
  const double norm = std::sqrt(blocks_.gradient_sum_squares() + reference::sum_of_squares(grads_));
  const double clip = clip_factor(o, norm);
  blocks_.apply_update(o, t, clip);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].empty()) continue;  // a tied head
    const bool gain = i == static_cast<std::size_t>(LmParam::final_norm_gain);
    const ParamShape ps = lm_param_shape(shape(), static_cast<LmParam>(i));
    reference::update_tensor(o, t, clip, /*decayed=*/!gain, ps.rows, ps.cols, params_[i], grads_[i],
                             states_[i]);
  }
  return norm;
}

#define MESHSLICE_REFERENCE_LM(T)                                                            \
  template std::vector<T> reference_embedding(const std::vector<T>&, std::size_t,            \
                                              const std::vector<int>&);                      \
  template void reference_embedding_gradient(const std::vector<T>&, std::size_t,             \
                                             const std::vector<int>&, std::vector<T>&);      \
  template double reference_cross_entropy(const std::vector<T>&, std::size_t,                \
                                          const std::vector<int>&, double, std::vector<T>&); \
  template class ReferenceLm<T>;
MESHSLICE_REFERENCE_LM(float)
MESHSLICE_REFERENCE_LM(double)
#undef MESHSLICE_REFERENCE_LM

}  // namespace meshslice
