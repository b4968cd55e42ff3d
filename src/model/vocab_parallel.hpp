#pragma once
// A language model's two vocabulary-sized ends on the 2D mesh, so that no chip holds a whole
// table or a whole row of logits (Megatron's vocab-parallel embedding and cross-entropy, on two
// axes):
//
//   the embedding table   V_p x H:  vocabulary over mesh rows, hidden over mesh columns
//   the logits            T x V_p:  tokens over mesh rows, vocabulary over mesh columns
//
// where V_p is the vocabulary padded to a multiple of the mesh (padded_vocab). The embedding
// looks up every token of the replica's micro-batch in this chip's rows of the table and
// reduce-scatters the partial lookups over the mesh rows into the standard layout; its backward
// pass all-gathers the gradient over the mesh rows and adds each token's row into its id's.
// The cross-entropy reduces the softmax's row maxima and sums over the mesh columns; the chip
// holding a token's target takes its logit; the gradient replaces the logits.
//
//     TokenBatch batch = make_token_batch(torus, vocab, row_ids, row_targets);  // the data side
//     TokenEmbedding<RealExecutor<double>> embedding(ex, vocab, H, T);
//     embedding.forward(batch, table, x);                      // x: T/Pr x H/Pc
//     VocabCrossEntropy<RealExecutor<double>> loss(ex, vocab, T / Pr);
//     double sum = loss.loss_and_gradient(logits, batch.targets, 1.0 / T);  // logits -> dlogits
//     embedding.backward(batch, dx, dtable, /*accumulate=*/false);
//
// Both run over any training executor (exec/training_executor.hpp): their collectives are
// planned once (no allocation per step) and timed like the rest of the step.
#include <cstddef>
#include <vector>

#include "comm/comm_options.hpp"
#include "comm/small_all_reduce.hpp"
#include "exec/caller_work.hpp"
#include "exec/workspace.hpp"
#include "gemm/vocab_padding.hpp"
#include "mesh/torus.hpp"
#include "model/kernels/cross_entropy.hpp"
#include "model/kernels/embedding.hpp"
#include "model/model_buffer.hpp"

namespace meshslice {

// The vocabulary and how the mesh splits it.
struct VocabSplit {
  std::size_t vocab = 0;   // V: the ids a token can have
  std::size_t padded = 0;  // V_p: the tables' and logits' size, a multiple of the mesh's rows
                           // and columns; ids V .. V_p - 1 are never predicted
  std::size_t mesh_rows = 1, mesh_cols = 1;

  std::size_t table_rows() const { return padded / mesh_rows; }  // a chip's table block
  std::size_t logit_cols() const { return padded / mesh_cols; }  // a chip's logits block
  // The first id of mesh row `row`'s table block / mesh column `col`'s logits block.
  std::size_t table_first(std::size_t row) const { return row * table_rows(); }
  std::size_t logit_first(std::size_t col) const { return col * logit_cols(); }
  // How many of the ids of mesh column `col`'s logits block are real (the rest: padding).
  std::size_t valid_logits(std::size_t col) const;
};

// UserError unless V_p is a multiple of both mesh extents and V <= V_p.
VocabSplit split_vocab(std::size_t vocab, std::size_t padded, std::size_t mesh_rows,
                       std::size_t mesh_cols);

// The vocabulary as meshslice-train pads it for the mesh (gemm/vocab_padding.hpp).
VocabSplit model_vocab(std::size_t vocab, std::size_t mesh_rows, std::size_t mesh_cols);

// A micro-batch's tokens as the embedding and the loss read them on this chip.
struct TokenBatch {
  TokenIds ids;      // every token of the replica's micro-batch (all mesh rows'), in order
  TokensById by_id;  // those whose ids are in this chip's rows of the table, grouped by id
  TokenIds targets;  // the next token of each of this chip's tokens (T / Pr)
};

// From this mesh row's tokens and targets (T / Pr each, in order): the ids gathered over the
// mesh rows (blocking, on the host: the data pipeline's part). UserError where an id or a
// target is not below V (the dataset reader checks its files before).
TokenBatch make_token_batch(const Torus& torus, const VocabSplit& vocab,
                            const std::vector<int>& row_ids, const std::vector<int>& row_targets);

template <class Exec>
class TokenEmbedding {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  // For micro-batches of `tokens` tokens per replica (T, a multiple of the mesh rows) and
  // hidden size H (a multiple of the mesh columns).
  TokenEmbedding(Exec& ex, const VocabSplit& vocab, std::size_t hidden, std::size_t tokens)
      : ex_(ex),
        vocab_(vocab),
        all_(model_matrix<Exec>("embedding_tokens", tokens,
                                hidden / static_cast<std::size_t>(ex.mesh_cols()))) {
    const std::size_t pr = static_cast<std::size_t>(ex_.mesh_rows());
    const auto shard = ex_.placeholder(tokens / pr, all_.extent(1));
    const auto all = ex_.placeholder(tokens, all_.extent(1));
    gather_.rehearse();
    scatter_.rehearse();
    {
      const AttachedWorkspace<Exec> attached(ex_, scatter_);
      ex_.start_reduce_scatter(Axis::row, all, shard, MatrixDim::rows);
    }
    {
      const AttachedWorkspace<Exec> attached(ex_, gather_);
      ex_.start_all_gather(Axis::row, shard, all, MatrixDim::rows);
    }
  }

  // x (T / Pr x H / Pc, standard layout) = the embedding of the batch's tokens in `table`
  // (this chip's V_p / Pr x H / Pc block).
  void forward(const TokenBatch& batch, const Mat& table, const Mat& x) {
    const std::size_t first = vocab_.table_first(static_cast<std::size_t>(ex_.coord(Axis::row)));
    ex_.compute("embedding", LocalWork::streaming(2.0 * elements(all_)),
                [&] { embedding_lookup(ex_.compute_space(), table, batch.ids, first, all_); });
    scatter_.replay();
    const AttachedWorkspace<Exec> attached(ex_, scatter_);
    ex_.wait(ex_.start_reduce_scatter(Axis::row, ex_.wrap(all_), ex_.wrap(x), MatrixDim::rows));
  }

  // dtable (this chip's block) = (dtable +) the table's gradient for dx, the gradient of the
  // forward pass's x.
  void backward(const TokenBatch& batch, const Mat& dx, const Mat& dtable, bool accumulate) {
    {
      gather_.replay();
      const AttachedWorkspace<Exec> attached(ex_, gather_);
      ex_.wait(ex_.start_all_gather(Axis::row, ex_.wrap(dx), ex_.wrap(all_), MatrixDim::rows));
    }
    ex_.compute("embedding_backward",
                LocalWork::streaming(double(elements(all_)) + 2.0 * double(elements(dtable))), [&] {
                  embedding_gradient(ex_.compute_space(), all_, batch.by_id, dtable, accumulate);
                });
  }

  std::size_t work_bytes() const { return elements(all_) * sizeof(T); }
  std::size_t workspace_bytes() const { return gather_.bytes() + scatter_.bytes(); }

 private:
  Exec& ex_;
  VocabSplit vocab_;
  Mat all_;  // T x H / Pc: the partial lookups, then the gathered gradient
  typename Exec::Workspace gather_, scatter_;
};

template <class Exec>
class VocabCrossEntropy {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  // For `rows` tokens per chip (T / Pr).
  VocabCrossEntropy(Exec& ex, const VocabSplit& vocab, std::size_t rows)
      : ex_(ex),
        vocab_(vocab),
        max_(model_matrix<Exec>("softmax_max", rows, 1)),
        sums_(model_matrix<Exec>("softmax_sums", rows, 2)),
        small_(2 * rows) {}

  // The sum over this chip's tokens of -log softmax(logits)[target] (the same on every chip of
  // a mesh row), and `logits` (T / Pr x V_p / Pc) replaced by scale times the loss's gradient.
  // Collective over the mesh row.
  double loss_and_gradient(const Mat& logits, const TokenIds& targets, double scale) {
    const std::size_t col = static_cast<std::size_t>(ex_.coord(Axis::col));
    const std::size_t valid = vocab_.valid_logits(col), first = vocab_.logit_first(col);
    const double n = static_cast<double>(elements(logits));
    ExecSpace space = ex_.compute_space();
    ex_.compute("softmax_max", LocalWork::streaming(n),
                [&] { vocab_row_max(space, logits, valid, max_); });
    reduce_over_vocab("softmax_max", max_, /*maximum=*/true);
    ex_.compute("softmax_sums", LocalWork::streaming(2.0 * n),  // the exponentials kept
                [&] { vocab_exp_sums(space, logits, valid, first, targets, max_, sums_); });
    reduce_over_vocab("softmax_sums", sums_, /*maximum=*/false);
    double loss = 0;
    ex_.compute("cross_entropy", LocalWork::streaming(2.0 * n), [&] {
      loss = cross_entropy_gradient(space, logits, valid, first, targets, max_, sums_, scale);
    });
    return loss;
  }

  std::size_t work_bytes() const { return (elements(max_) + elements(sums_)) * sizeof(T); }

 private:
  void reduce_over_vocab(const char* name, const Mat& m, bool maximum) {
    ex_.communicate(name, Axis::col, {CommWork::all_reduce, static_cast<double>(elements(m))}, [&] {
      const AxisComm& ring = ex_.torus().axis(Axis::col);
      if (maximum)
        small_.max(ex_.compute_space(), ring, m);
      else
        small_.sum(ex_.compute_space(), ring, m);
    });
  }

  Exec& ex_;
  VocabSplit vocab_;
  Mat max_, sums_;  // per token: the row maximum; the sum of exponentials and target logit
  SmallAllReduce<T> small_;
};

}  // namespace meshslice
