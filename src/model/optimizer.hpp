#pragma once
// The optimizer of a parameter set, one of optimizers/optimizer_table.hpp's, owning its state
// as tensors named and laid out like what it updates of each parameter (the shard, or with
// ZeRO-1 this replica's row of it), so a checkpoint writes "blocks.3.ff1.weight.exp_avg" beside
// the weight it belongs to. The element-wise formula is the descriptor's, which the serial
// reference runs too; a step updates every parameter in one launch (kernels/multi_tensor.hpp).
//
//     Optimizer<float> opt(parse_optimizer("adamw"));
//     for (const Parameter<float>& p : set) opt.add(state tensors shaped like p.updated());
//     opt.step(space, settings, t, clip, set);
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/multi_tensor.hpp"
#include "model/optimizers/optimizer_table.hpp"
#include "model/parameter_set.hpp"

namespace meshslice {

// Element i of a chunk's state tensors, as a descriptor's update takes them: state[k].
template <class T>
struct ChunkState {
  const TensorChunk<T>& chunk;
  std::uint32_t i;
  KOKKOS_INLINE_FUNCTION T& operator[](int k) const { return chunk.state[k][i]; }
};

// Descriptor D's update of one element of a chunk, with the step's scalars for tensors without
// and with weight decay.
template <class D, class T>
struct OptimizerElement {
  typename D::Scalars scalars[2];
  KOKKOS_INLINE_FUNCTION void operator()(const TensorChunk<T>& c, std::uint32_t i) const {
    D::update(scalars[c.decays], c.value[i], c.grad[i], ChunkState<T>{c, i});
  }
};

template <class T>
class Optimizer {
 public:
  explicit Optimizer(OptimizerKind kind) : kind_(kind) {}

  OptimizerKind kind() const { return kind_; }
  // The state tensors per parameter and their names' suffixes.
  const std::vector<std::string>& state_names() const { return optimizer_state_names(kind_); }
  std::size_t state_count() const { return state_names().size(); }
  // Adds the next parameter's state, state_count() tensors shaped like what is updated of it.
  void add(std::vector<Matrix<T>> state) {
    MESHSLICE_ASSERT(state.size() == state_count(), "Optimizer: ", state.size(),
                     " state tensors for ", optimizer_name(kind_), ", which keeps ", state_count());
    for (const Matrix<T>& s : state) bytes_ += elements(s) * sizeof(T);
    states_.push_back(std::move(state));
  }
  // State tensor `which` (of state_names()) of parameter `param`, in the set's order.
  const Matrix<T>& state(std::size_t param, std::size_t which) const {
    return states_.at(param).at(which);
  }
  std::size_t bytes() const { return bytes_; }
  // Memory traffic of an update per element: the weight, its gradient and the state read, the
  // weight and the state written.
  double traffic_per_element() const { return 3.0 + 2.0 * static_cast<double>(state_count()); }

  // One step t (1-based) of every parameter of `set`, gradients scaled by `clip`.
  void step(const ExecSpace& space, const OptimizerSettings& settings, std::size_t t, double clip,
            const ParameterSet<T>& set) const {
    MESHSLICE_ASSERT(settings.kind == kind_, "Optimizer: a ", optimizer_name(settings.kind),
                     " step on the state of ", optimizer_name(kind_));
    MESHSLICE_ASSERT(set.size() == states_.size(), "Optimizer: ", set.size(),
                     " parameters, state for ", states_.size());
    if (chunked_for_ != &set) {  // the first step: the table of every tensor's chunks
      std::vector<MultiTensorEntry<T>> tensors;
      for (std::size_t i = 0; i < set.size(); ++i)
        tensors.push_back({set[i].updated(), set[i].update_gradient(), states_[i], set[i].decays});
      chunks_ = MultiTensorChunks<T>(tensors);
      chunked_for_ = &set;
    }
    visit_optimizer(kind_, [&](auto descriptor) {
      using D = decltype(descriptor);
      const auto scalars = step_scalars<D>(settings, t, clip);
      const std::string label = concat(D::info().name, "_update");
      multi_tensor_for_each(label.c_str(), space, chunks_,
                            OptimizerElement<D, T>{{scalars[0], scalars[1]}});
    });
  }

 private:
  OptimizerKind kind_;
  std::vector<std::vector<Matrix<T>>> states_;
  std::size_t bytes_ = 0;
  // Every parameter's update in one launch (kernels/multi_tensor.hpp), for the set it was made
  // for (a set's tensors keep their memory for its life).
  mutable MultiTensorChunks<T> chunks_;
  mutable const ParameterSet<T>* chunked_for_ = nullptr;
};

}  // namespace meshslice
