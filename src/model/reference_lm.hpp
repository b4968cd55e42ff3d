#pragma once
// The serial reference of a language model (ModelShape::vocab > 0): its two ends, the token
// embedding and the cross-entropy of the logits against the next tokens (model/vocab_parallel.hpp
// distributes them), and the whole model,
//
//   x = E[ids];  y = blocks(x);  h = RMSNorm(y) * g;  logits = h W  (W = E^T when tied);
//   loss = mean over tokens of -log softmax(logits)[target]
//
// Whole tensors in std::vector and plain loops, as the rest of the serial reference
// (model/reference_model.hpp): nothing shared with the distributed code but the formulas and
// the seeding. Tables are row-major V x H, activations tokens x H, logits tokens x V (the real
// vocabulary: the reference has no padding).
//
//     ReferenceLm<double> lm(shape, seed);
//     double loss = lm.loss_and_gradients(ids, targets);  // then lm.gradient(LmParam::embedding)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_config.hpp"
#include "model/reference_model.hpp"
#include "model/token_sampling.hpp"

namespace meshslice {

// x (tokens x H): row t is row ids[t] of the table.
template <class T>
std::vector<T> reference_embedding(const std::vector<T>& table, std::size_t hidden,
                                   const std::vector<int>& ids);

// dtable (V x H) += the rows of dx (tokens x H) added into the rows of their ids.
template <class T>
void reference_embedding_gradient(const std::vector<T>& dx, std::size_t hidden,
                                  const std::vector<int>& ids, std::vector<T>& dtable);

// The sum over tokens of -log softmax(logits[t])[targets[t]] (logits: tokens x vocab), summed in
// double; the gradient of scale times that sum into dlogits (tokens x vocab).
template <class T>
double reference_cross_entropy(const std::vector<T>& logits, std::size_t vocab,
                               const std::vector<int>& targets, double scale,
                               std::vector<T>& dlogits);

template <class T>
class ReferenceLm {
 public:
  // Element (r, c) of parameter p is init_value(seed, lm_param_stream(p), lm_param_std(p), r, c);
  // the blocks' as ReferenceModel's. UserError unless shape.vocab > 0.
  ReferenceLm(const ModelShape& shape, std::uint64_t seed);

  const ModelShape& shape() const { return blocks_.shape(); }
  // blocks().round_gemm_operands_to_bf16() rounds the head's GEMM operands too.
  ReferenceModel<T>& blocks() { return blocks_; }
  const ReferenceModel<T>& blocks() const { return blocks_; }
  // LmParam::lm_head of a tied model is a UserError (the embedding is the head).
  std::vector<T>& param(LmParam p);
  const std::vector<T>& gradient(LmParam p) const;

  // The mean over tokens of -log softmax(logits)[target] for the tokens `ids` (whole sequences
  // of seq_len) and their next tokens.
  T loss(const std::vector<int>& ids, const std::vector<int>& targets) const;
  // The logits (tokens x vocab) of the tokens `ids` (whole sequences of seq_len).
  std::vector<T> logits(const std::vector<int>& ids) const;
  // The same, and every gradient (the blocks' in blocks()).
  T loss_and_gradients(const std::vector<int>& ids, const std::vector<int>& targets);
  // Decoding: the token after position `position` of `sequence` (seq_len tokens, the ones after
  // `position` ignored by causal attention), the most likely or draw `draw` of `sampling`.
  int next_token(const std::vector<int>& sequence, std::size_t position,
                 const TokenSampling& sampling = {}, std::uint64_t draw = 0) const;
  // One optimizer update of every parameter from the current gradients (t: the 1-based step),
  // clipped to the global norm of all of them; returns that norm before clipping.
  double step(const OptimizerSettings& optimizer, std::size_t t);

 private:
  struct Forward;  // what the backward pass needs
  Forward forward(const std::vector<int>& ids, const std::vector<int>& targets) const;
  std::size_t index(LmParam p) const;

  ReferenceModel<T> blocks_;
  // By LmParam (a tied head's empty); each parameter's optimizer state, made by its first step.
  std::vector<std::vector<T>> params_, grads_;
  std::vector<std::vector<std::vector<T>>> states_;
};

}  // namespace meshslice
