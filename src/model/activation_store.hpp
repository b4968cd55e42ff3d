#pragma once
// The activations the blocks of a rank keep from their forward passes for their backward passes:
// per block and activation slot (a micro-batch in flight) the block's input, the residual stream
// between its halves and each module's Saved set (each module declares and makes its own:
// model/modules/attention_module.hpp, mlp.hpp; their declarations in block/ count them for the
// memory bound and the tuner), or for a checkpointed block its input alone, with one set shared by the
// checkpointed blocks that a recomputation fills again in the backward pass. The shared set
// keeps some inputs in the forward pass's staging buffers where the layouts allow (see
// add_recomputation()).
//
//     ActivationStore<Exec> store(ex, shape, plan, attention_shape);
//     std::size_t id = store.add_block(/*checkpointed=*/false, slots);   // per block
//     store.add_recomputation(normed, output);              // when a block is checkpointed
//     SavedActivations<Exec> s = store.working_set(id, slot);  // what block `id` works in
#include <cstddef>
#include <vector>

#include "core/errors.hpp"
#include "model/activation_buffers.hpp"
#include "model/kernels/attention.hpp"
#include "model/layer_plan.hpp"
#include "model/model_config.hpp"
#include "model/modules/attention_module.hpp"
#include "model/modules/mlp.hpp"

namespace meshslice {

// What the backward pass needs of one block and micro-batch.
template <class Exec>
struct SavedActivations {
  Matrix<typename Exec::Scalar> x_in;  // the block's input: the residual stream into attention
  typename AttentionModule<Exec>::Saved attention;
  Matrix<typename Exec::Scalar> x_mid;  // the residual stream between the halves: the MLP's input
  typename MlpModule<Exec>::Saved mlp;
};

template <class Exec>
class ActivationStore {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Saved = SavedActivations<Exec>;

  ActivationStore(const Exec& ex, const ModelShape& shape, const ModelPlan& plan,
                  const AttentionShape& attention)
      : make_(ex, shape, plan), attention_(attention) {}

  // From the next block on, layer k's saved input (QKV's, FF1's or FF2's) is kept in bf16
  // (SavedTensorMaker::keep_input_in_bf16).
  void keep_input_in_bf16(FcKind k, bool keep) { make_.keep_input_in_bf16(k, keep); }

  // A block's `slots` sets (checkpointed: its input alone); returns its id.
  std::size_t add_block(bool checkpointed, std::size_t slots) {
    Block& b = blocks_.emplace_back();
    b.checkpointed = checkpointed;
    for (std::size_t slot = 0; slot < slots; ++slot) {
      if (!checkpointed) {
        b.saved.push_back(saved_set(true));
        continue;
      }
      Saved input;
      input.x_in = make_.activation(Layout::standard, make_.shape().hidden, "x_in");
      b.saved.push_back(input);
    }
    return blocks_.size() - 1;
  }

  // The set the checkpointed blocks' recomputations fill, once every block is added, where any
  // is checkpointed. It keeps QKV's and FF1's inputs in the forward pass's staging buffers
  // `normed` (a norm's output) and `output` (an FC layer's), where their layouts allow: the
  // backward pass touches neither; within a forward pass `normed` is free once QKV's input is
  // written unless the MLP's norm stages there, and `output` once the attention residual has
  // read it (a recomputation stops before FF2 writes it; a model without gradients keeps
  // nothing).
  void add_recomputation(const Mat& normed, const Mat& output) {
    for (const Block& b : blocks_)
      if (b.checkpointed) {
        recompute_ = saved_set(false, &normed, &output);
        return;
      }
  }

  // Whether block `id` keeps its input alone and recomputes the rest.
  bool checkpointed(std::size_t id) const { return blocks_.at(id).checkpointed; }
  // Block id's input for `slot`: the residual stream the block starts from.
  const Mat& input(std::size_t id, std::size_t slot) const {
    return blocks_[id].saved.at(slot).x_in;
  }
  // The activations block `id` works in for `slot`: its own, or the recomputation's set around
  // its saved input.
  Saved working_set(std::size_t id, std::size_t slot) const {
    const Block& b = blocks_.at(id);
    MESHSLICE_ASSERT(slot < b.saved.size(), "ActivationStore: activation slot ", slot,
                     " of a block with ", b.saved.size());
    if (!b.checkpointed) return b.saved[slot];
    Saved s = recompute_;
    s.x_in = b.saved[slot].x_in;
    return s;
  }
  // The bytes of every saved set.
  std::size_t bytes() const { return make_.bytes(); }

 private:
  struct Block {
    bool checkpointed = false;
    std::vector<Saved> saved;  // per activation slot; checkpointed: x_in alone
  };

  // A full set of saved activations (x_in too unless `with_input` is false); the staging
  // buffers given: the recomputation's (see add_recomputation()).
  Saved saved_set(bool with_input, const Mat* normed = nullptr, const Mat* output = nullptr) {
    const std::size_t H = make_.shape().hidden;
    const bool normed_free = normed && !MlpModule<Exec>::stages_in_normed(make_);
    Saved s;
    if (with_input) s.x_in = make_.activation(Layout::standard, H, "x_in");
    s.attention =
        AttentionModule<Exec>::make_saved(make_, attention_, normed_free ? normed : nullptr);
    s.x_mid = make_.activation(Layout::standard, H, "x_mid");
    s.mlp = MlpModule<Exec>::make_saved(make_, output);
    return s;
  }

  SavedTensorMaker<Exec> make_;
  AttentionShape attention_;
  std::vector<Block> blocks_;
  Saved recompute_;
};

}  // namespace meshslice
