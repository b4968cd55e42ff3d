#pragma once
// The optimizer of a parameter set, one of optimizers/optimizer_table.hpp's, owning its state
// tensors as optimizer_states() names and shapes them for each parameter: laid out like what it
// updates of the parameter (the shard, or with ZeRO-1 this replica's row of it), or a factored
// state whole, so a checkpoint writes "blocks.3.ff1.weight.exp_avg" beside the weight it belongs
// to. An element-wise descriptor's formula, which the serial reference runs too, updates every
// parameter in one launch (kernels/multi_tensor.hpp); a factored one's step sums over whole
// tensors and runs in parameters/factored_step.hpp.
//
//     Optimizer<float> opt(parse_optimizer("adamw"));
//     for (const Parameter<float>& p : set) opt.add(its optimizer_states(), allocated);
//     opt.step(space, settings, t, clip, set);   // element-wise
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "parameters/multi_tensor.hpp"
#include "parameters/optimizers/optimizer_table.hpp"
#include "parameters/parameter_set.hpp"

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
  // Whether its step is element-wise (else parameters/factored_step.hpp runs it).
  bool element_wise() const { return optimizer_info(kind_).factored_states.empty(); }
  // Adds the next parameter's state: the tensors optimizer_states() lists for it.
  void add(std::vector<Matrix<T>> state) {
    for (const Matrix<T>& s : state) bytes_ += elements(s) * sizeof(T);
    states_.push_back(std::move(state));
  }
  // The state tensors of parameter `param` (in the set's order), as optimizer_states() lists them.
  const std::vector<Matrix<T>>& states(std::size_t param) const { return states_.at(param); }
  // State tensor `which` of parameter `param`.
  const Matrix<T>& state(std::size_t param, std::size_t which) const {
    return states_.at(param).at(which);
  }
  std::size_t bytes() const { return bytes_; }
  // Memory traffic of an element-wise update per element: the weight, its gradient and the state
  // read, the weight and the state written (FactoredStep counts its own).
  double traffic_per_element() const {
    return 3.0 + 2.0 * static_cast<double>(optimizer_state_names(kind_).size());
  }

  // The table of every tensor's chunks for the steps of `set` (once per set): made before the
  // first step by whoever plans the steps, so that a step allocates and uploads nothing.
  void prepare(const ParameterSet<T>& set) const {
    if (chunked_for_ == &set) return;
    MESHSLICE_ASSERT(set.size() == states_.size(), "Optimizer: ", set.size(),
                     " parameters, state for ", states_.size());
    std::vector<MultiTensorEntry<T>> tensors;
    for (std::size_t i = 0; i < set.size(); ++i)
      tensors.push_back({set[i].updated(), set[i].update_gradient(), states_[i], set[i].decays});
    chunks_ = MultiTensorChunks<T>(tensors);
    chunked_for_ = &set;
  }

  // One step t (1-based) of every parameter of `set`, gradients scaled by `clip`.
  void step(const ExecSpace& space, const OptimizerSettings& settings, std::size_t t, double clip,
            const ParameterSet<T>& set) const {
    MESHSLICE_ASSERT(settings.kind == kind_, "Optimizer: a ", optimizer_name(settings.kind),
                     " step on the state of ", optimizer_name(kind_));
    prepare(set);  // checks the set against the state
    visit_optimizer(kind_, [&](auto descriptor) {
      using D = decltype(descriptor);
      if constexpr (IsFactored<D>::value) {
        throw InternalError(concat(D::info().name, " is factored: its step is FactoredStep's"));
      } else {
        const auto scalars = step_scalars<D>(settings, t, clip);
        const std::string label = concat(D::info().name, "_update");
        multi_tensor_for_each(label.c_str(), space, chunks_,
                              OptimizerElement<D, T>{{scalars[0], scalars[1]}});
      }
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
