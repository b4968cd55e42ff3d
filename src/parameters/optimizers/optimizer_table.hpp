#pragma once
// Every optimizer meshslice trains with, one line each; the first is the default. The deck's
// optimizer.kind and keys, the distributed step, the serial reference, checkpoints and the
// memory estimates all read this table (a descriptor's contract: optimizers/update_step.hpp).
//
//     visit_optimizer(kind, [&](auto descriptor) { using D = decltype(descriptor); ... });
#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include "parameters/optimizers/adafactor.hpp"
#include "parameters/optimizers/adamw.hpp"
#include "parameters/optimizers/lion.hpp"
#include "parameters/optimizers/nadamw.hpp"
#include "parameters/optimizers/schedule.hpp"
#include "parameters/optimizers/sgd.hpp"

namespace meshslice {

using OptimizerTable = std::tuple<Adamw, Sgd, Lion, Adafactor, Nadamw>;

constexpr std::size_t kOptimizers = std::tuple_size<OptimizerTable>::value;

namespace detail {
template <class F, std::size_t... I>
void visit_optimizer_at(std::size_t index, F&& f, std::index_sequence<I...>) {
  // Calls f with the descriptor at `index`: exactly one term of the fold matches.
  ((index == I ? (f(std::tuple_element_t<I, OptimizerTable>{}), 0) : 0), ...);
}
}  // namespace detail

// Calls f(Descriptor{}) for the optimizer `kind` names.
template <class F>
void visit_optimizer(OptimizerKind kind, F&& f) {
  detail::visit_optimizer_at(kind.index, f, std::make_index_sequence<kOptimizers>{});
}

// Descriptor D's scalars of step t (from 1) with the clipping factor `clip`: [0] for a tensor
// without weight decay (a norm's gain), [1] for one with (a weight matrix).
template <class D>
std::array<typename D::Scalars, 2> step_scalars(const OptimizerSettings& o, std::size_t t,
                                                double clip) {
  const double lr = learning_rate(o, t);
  return {D::scalars(o, {lr, t, clip, false}), D::scalars(o, {lr, t, clip, true})};
}

}  // namespace meshslice
