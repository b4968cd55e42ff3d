#pragma once
// A language model's two ends (shape.vocab > 0; model/vocab_parallel.hpp), on the ranks that hold
// its first and its last block: the embedding of a micro-batch's tokens into the first block's
// input, and the last block's output through the final RMSNorm, the head (H -> V_p, as the
// plan's lm_head says: Y-stationary keeping W, X-stationary keeping W^T, the embedding's table
// when tied) and the vocabulary-parallel cross-entropy; decoding's next token from the same
// logits. Its parameters are made through the model's ParameterMaker; the final norm shares the
// blocks' RmsNorm and their normed-activation buffers (model/transformer.hpp).
//
//     LanguageModelEnds<Exec> ends(ex, shape, head_plan, first, last, make, seed, norm, work);
//     ends.embed(batch, x);                                        // the first block's input
//     double loss = ends.head_loss(batch, y, scale, dy, accumulate, sync);  // sync: or nullptr
//     ends.embed_backward(batch, dx, accumulate, sync);
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "exec/host_reduction.hpp"
#include "model/fc_layer.hpp"
#include "model/layer_plan.hpp"
#include "model/model_buffer.hpp"
#include "model/model_config.hpp"
#include "model/modules/rms_norm.hpp"
#include "model/parameter_maker.hpp"
#include "model/parameter_update.hpp"
#include "model/token_sampling.hpp"
#include "model/vocab_parallel.hpp"

namespace meshslice {

template <class Exec>
class LanguageModelEnds {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  static constexpr std::size_t kNone = ~std::size_t{0};

  // The buffers of standard-layout T x H activations the ends share with the blocks: the final
  // norm's output, and its gradient (trainable).
  struct SharedWork {
    Mat normed, normed_grad;
  };

  // The ends of a rank that holds the first block (`first`: the embedding) and or the last one
  // (`last`: the final norm and the head). UserError when the head cannot be planned, or tied
  // with the two ends on different ranks.
  LanguageModelEnds(Exec& ex, const ModelShape& shape, const FcPlan& head_plan, bool first,
                    bool last, ParameterMaker<Exec>& make, std::uint64_t seed, RmsNorm<Exec>& norm,
                    const SharedWork& work, bool trainable, MemoryUse& memory)
      : ex_(ex), shape_(shape), params_(make.set()), norm_(norm), work_(work) {
    const std::size_t pr = ex.mesh_rows(), pc = ex.mesh_cols(), H = shape.hidden;
    const std::size_t i = ex.coord(Axis::row), j = ex.coord(Axis::col);
    vocab_ = model_vocab(shape.vocab, pr, pc);
    const std::size_t Vp = vocab_.padded, T_ = shape.tokens();
    require(!shape.tied_head || (first && last),
            "model.tied_head: the embedding is the head, so the first and the last block must "
            "be on one pipeline stage; untie the head or run without pipeline stages");
    if (last) {
      try {
        head_layer_ = std::make_unique<FcLayer<Exec>>(ex, head_plan.stationary, false, T_, H, Vp,
                                                      head_plan.gemms, trainable);
      } catch (const UserError& e) {
        throw UserError(concat("the LM head (", H, " -> ", Vp, ", the vocabulary of ", vocab_.vocab,
                               " padded): ", e.what()));
      }
    }
    // The head's weight (the table when tied) keeps a bf16 copy where its GEMMs read one; its
    // input, the final norm's output, stays in T.
    const bool head_copy = head_layer_ && head_layer_->weight_kept_in_bf16();
    if (head_layer_) head_layer_->reserve_rounding(false);
    const auto add = [&](LmParam param, std::size_t rows, std::size_t cols, std::size_t row0,
                         std::size_t col0, bool transposed) {
      Parameter<T> p = parameter(param, row0, col0);
      p.layout.transposed = transposed;
      const bool read_by_head =
          param == LmParam::lm_head || (param == LmParam::embedding && shape.tied_head);
      // The tied table's lookup reads its fp32 value too.
      const Bf16Copy copy = !(read_by_head && head_copy)  ? Bf16Copy::none
                            : param == LmParam::embedding ? Bf16Copy::beside_read_value
                                                          : Bf16Copy::only_copy_read;
      return make.add(std::move(p), rows, cols, seed, lm_param_stream(param),
                      lm_param_std(shape, param), copy);
    };
    // Vocabulary over mesh rows and hidden over mesh columns: the embedding's table, and an
    // X-stationary head's W^T (the table itself when tied).
    const auto add_table = [&](LmParam param, bool transposed) {
      return add(param, Vp / pr, H / pc, i * (Vp / pr), j * (H / pc), transposed);
    };
    if (first) {
      embedding_ = add_table(LmParam::embedding, false);
      embedding_layer_ = std::make_unique<TokenEmbedding<Exec>>(ex, vocab_, H, T_);
      memory.work += embedding_layer_->work_bytes();
    }
    if (!last) return;
    final_gain_ = add(LmParam::final_norm_gain, 1, H / pc, 0, j * (H / pc), false);
    // The head keeps W (H x V_p: hidden over mesh rows) when Y-stationary, W^T when X-stationary.
    if (!shape.tied_head)
      head_ = head_plan.weight_transposed()
                  ? add_table(LmParam::lm_head, true)
                  : add(LmParam::lm_head, H / pr, Vp / pc, i * (H / pr), j * (Vp / pc), false);
    const std::size_t rows = T_ / pr;
    cross_entropy_ = std::make_unique<VocabCrossEntropy<Exec>>(ex, vocab_, rows);
    final_rinv_ = counted_matrix<Exec>("final_rinv", rows, 1, memory.work);
    logits_ = counted_matrix<Exec>("logits", rows, Vp / pc, memory.work);
    memory.work += cross_entropy_->work_bytes();
  }

  bool embeds() const { return embedding_ != kNone; }
  bool has_head() const { return final_gain_ != kNone; }
  const VocabSplit& vocab() const { return vocab_; }
  // The parameters' places in the set in the backward pass's order of their gradients: the
  // head's and the final gain's (the loss step makes them) first, the embedding's last.
  std::vector<std::size_t> first_gradients() const { return held({head_, final_gain_}); }
  std::vector<std::size_t> last_gradients() const { return held({embedding_}); }
  std::size_t workspace_bytes() const {
    return (head_layer_ ? head_layer_->workspace_bytes() : 0) +
           (embedding_layer_ ? embedding_layer_->workspace_bytes() : 0);
  }

  // x (standard layout) = the embedding of the micro-batch's tokens.
  void embed(const TokenBatch& batch, const Mat& x) {
    MESHSLICE_ASSERT(embeds(), "LanguageModelEnds::embed on a rank without the embedding");
    embedding_layer_->forward(batch, params_[embedding_].value, x);
  }

  // The table's gradient for dx, the gradient of embed()'s x, overwritten or with `accumulate`
  // added to; `sync` (null: not the last micro-batch) starts its dp averaging.
  void embed_backward(const TokenBatch& batch, const Mat& dx, bool accumulate,
                      ParameterUpdate<Exec>* sync) {
    MESHSLICE_ASSERT(embeds(), "LanguageModelEnds::embed_backward on a rank without the embedding");
    const Parameter<T>& table = params_[embedding_];
    // Tied, the head's gradient is in the table's already: add to it.
    embedding_layer_->backward(batch, dx, table.grad, accumulate || shape_.tied_head);
    if (sync) sync->start(table);
  }

  // The cross-entropy of y (the last block's output) against the batch's targets: `scale` times
  // its gradient into dy, the head's and the final gain's gradients (accumulate and sync as
  // embed_backward()); dy empty: an evaluation, the loss alone. Returns the sum of this mesh
  // row's token losses on mesh column 0, and 0 on the other columns, so that a sum over the mesh
  // counts each token once.
  double head_loss(const TokenBatch& batch, const Mat& y, double scale, const Mat& dy,
                   bool accumulate, ParameterUpdate<Exec>* sync) {
    MESHSLICE_ASSERT(has_head(), "LanguageModelEnds::head_loss on a rank without the head");
    const Parameter<T>& gain = params_[final_gain_];
    const Parameter<T>& head = head_weight();
    head_logits(y);
    const double loss = cross_entropy_->loss_and_gradient(logits_, batch.targets, scale);
    const double counted = ex_.coord(Axis::col) == 0 ? loss : 0.0;
    if (elements(dy) == 0) return counted;  // an evaluation: no gradients
    const Mat& dh = work_.normed_grad;
    const auto dlogits = head_layer_->output_gradient(ex_.wrap(logits_));
    head_layer_->backward_weight(ex_.wrap(work_.normed), dlogits, ex_.wrap(head.grad), accumulate);
    if (sync && !shape_.tied_head) sync->start(head);
    head_layer_->backward_data(dlogits, ex_.wrap_operand(weight_operand(head)), ex_.wrap(dh));
    ex_.compute("zero", LocalWork::streaming(double(elements(dy))),
                [&] { Kokkos::deep_copy(ex_.compute_space(), dy, T(0)); });
    norm_.backward(dh, y, gain.value, final_rinv_, dy, gain.grad, accumulate);
    if (sync) sync->start(gain);
    fence(ex_.compute_space(), "head_loss");
    return counted;
  }

  // Decoding: the next token after this chip's token `row` (rows of the standard layout), from
  // y, the last block's output, greedy or drawn (draw `draw` of `sampling`); the same id on every
  // chip of the mesh row (collective over it). The logits stay split: each chip offers its best
  // score (model/token_sampling.hpp), the row agrees.
  int next_token(const Mat& y, std::size_t row, const TokenSampling& sampling, std::uint64_t draw) {
    MESHSLICE_ASSERT(has_head() && row < logits_.extent(0),
                     "LanguageModelEnds::next_token: no head or row ", row, " of ",
                     logits_.extent(0));
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
    reduce_through(ex_, "next_token", {Axis::col}, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC);
    return best.id;
  }

 private:
  Parameter<T> parameter(LmParam param, std::size_t row0, std::size_t col0) const {
    Parameter<T> p;
    p.name = lm_parameter_name(param);
    p.order = model_parameter_order(shape_, param);
    p.decays = param != LmParam::final_norm_gain;
    p.global = lm_param_shape(shape_, param);
    p.layout.row0 = row0;
    p.layout.col0 = col0;
    p.row_copies = param == LmParam::final_norm_gain;
    return p;
  }
  // The head's weight: its own, or tied, the embedding's table.
  const Parameter<T>& head_weight() const { return params_[shape_.tied_head ? embedding_ : head_]; }
  // logits_ = the head of the final norm of y (the last block's output), the norm's in normed.
  void head_logits(const Mat& y) {
    norm_.forward(y, params_[final_gain_].value, final_rinv_, work_.normed);
    head_layer_->forward(ex_.wrap(work_.normed), ex_.wrap_operand(weight_operand(head_weight())),
                         ex_.wrap(logits_));
  }
  static std::vector<std::size_t> held(std::initializer_list<std::size_t> places) {
    std::vector<std::size_t> out;
    for (const std::size_t i : places)
      if (i != kNone) out.push_back(i);
    return out;
  }

  Exec& ex_;
  ModelShape shape_;
  const ParameterSet<T>& params_;
  RmsNorm<Exec>& norm_;
  SharedWork work_;
  VocabSplit vocab_;
  std::size_t embedding_ = kNone, final_gain_ = kNone, head_ = kNone;  // places in params_
  std::unique_ptr<TokenEmbedding<Exec>> embedding_layer_;
  std::unique_ptr<FcLayer<Exec>> head_layer_;
  std::unique_ptr<VocabCrossEntropy<Exec>> cross_entropy_;
  Mat final_rinv_, logits_;  // the final norm's 1 / rms; the logits, then their gradient
};

}  // namespace meshslice
