#pragma once
// The activations the blocks of a rank keep from their forward passes for their backward passes:
// per block and activation slot (a micro-batch in flight) the block's input, the residual streams
// between its modules and each module's Saved set (model/modules/block_modules.hpp makes them,
// each module its own; their declarations in block/ count them for the memory bound and the
// tuner), or for a checkpointed block its input alone, with one set shared by the checkpointed
// blocks that a recomputation fills again in the backward pass. The shared set keeps some inputs
// in the forward pass's staging buffers where the layouts allow (see add_recomputation()).
//
//     ActivationStore<Exec> store(ex, shape, plan);
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
#include "model/modules/block_modules.hpp"

namespace meshslice {

template <class Exec>
class ActivationStore {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Saved = SavedActivations<Exec>;

  ActivationStore(const Exec& ex, const ModelShape& shape, const ModelPlan& plan)
      : make_(ex, shape, plan) {}

  // From the next block on, layer k's saved input (QKV's, FF1's or FF2's) is kept in bf16
  // (SavedTensorMaker::keep_input_in_bf16).
  void keep_input_in_bf16(FcKind k, bool keep) { make_.keep_input_in_bf16(k, keep); }

  // A block's `slots` sets (checkpointed: its input alone); returns its id.
  std::size_t add_block(bool checkpointed, std::size_t slots) {
    Block& b = blocks_.emplace_back();
    b.checkpointed = checkpointed;
    for (std::size_t slot = 0; slot < slots; ++slot) {
      if (!checkpointed) {
        b.saved.push_back(BlockModules<Exec>::make_saved(make_, true));
        continue;
      }
      Saved input;
      input.inputs[0] = make_.activation(Layout::standard, make_.shape().hidden, "x_in");
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
  // nothing). BlockModules::make_saved states the rule for any list of modules.
  void add_recomputation(const Mat& normed, const Mat& output) {
    for (const Block& b : blocks_)
      if (b.checkpointed) {
        recompute_ = BlockModules<Exec>::make_saved(make_, false, {&normed, &output});
        return;
      }
  }

  // Whether block `id` keeps its input alone and recomputes the rest.
  bool checkpointed(std::size_t id) const { return blocks_.at(id).checkpointed; }
  // Block id's input for `slot`: the residual stream the block starts from.
  const Mat& input(std::size_t id, std::size_t slot) const {
    return blocks_[id].saved.at(slot).block_input();
  }
  // The activations block `id` works in for `slot`: its own, or the recomputation's set around
  // its saved input.
  Saved working_set(std::size_t id, std::size_t slot) const {
    const Block& b = blocks_.at(id);
    MESHSLICE_ASSERT(slot < b.saved.size(), "ActivationStore: activation slot ", slot,
                     " of a block with ", b.saved.size());
    if (!b.checkpointed) return b.saved[slot];
    Saved s = recompute_;
    s.inputs[0] = b.saved[slot].inputs[0];
    return s;
  }
  // The bytes of every saved set.
  std::size_t bytes() const { return make_.bytes(); }

 private:
  struct Block {
    bool checkpointed = false;
    std::vector<Saved> saved;  // per activation slot; checkpointed: x_in alone
  };

  SavedTensorMaker<Exec> make_;
  std::vector<Block> blocks_;
  Saved recompute_;
};

}  // namespace meshslice
