#pragma once
// The optimizer of a parameter set: AdamW or SGD with momentum, owning its state as tensors
// named and laid out like what it updates of each parameter (the shard, or with ZeRO-1 this
// replica's row of it), so a checkpoint writes "blocks.3.ff1.weight.exp_avg" beside the weight
// it belongs to. The element-wise formulas are model/model_math.hpp's, which the serial
// reference uses too.
//
//     Optimizer<float> opt(OptimizerKind::adamw);
//     for (const Parameter<float>& p : set) opt.add(state tensors shaped like p.updated());
//     opt.step(space, settings, t, clip, set);
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/model_math.hpp"
#include "model/parameter_set.hpp"

namespace meshslice {

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
    for (std::size_t i = 0; i < set.size(); ++i) {
      const Parameter<T>& p = set[i];
      const UpdateScalars u = update_scalars(settings, t, clip, p.decays);
      if (kind_ == OptimizerKind::sgd)
        sgd_step(space, u, p.updated(), p.update_gradient(), state(i, 0));
      else
        adamw_step(space, u, p.updated(), p.update_gradient(), state(i, 0), state(i, 1));
    }
  }

 private:
  OptimizerKind kind_;
  std::vector<std::vector<Matrix<T>>> states_;
  std::size_t bytes_ = 0;
};

}  // namespace meshslice
