#pragma once
// The training-step executor contract: what the model (model/transformer.hpp, model/trainer.hpp)
// needs from an executor beyond the GEMM interface of exec/executor_interface.hpp. RealExecutor,
// sim::NullExecutor and sim::CombinedExecutor over either provide it, and each is checked with
// `is_training_executor_v` (RealExecutor in its header, the sim ones in exec/executor_checks.cpp).
//
//   types    Scalar (float, double), holds_data (false: matrices without memory, work not run)
//   data     real()              the executor that holds the data (itself, or a combined one's)
//            wrap(m)             a real matrix as this executor's Mat
//            shared_operand(m)   m as the operand of several GEMMs (a bf16 run rounds it once)
//            reserve_shared_operand(rows, cols)   its scratch sized before the steps
//            keeps_operands_in_bf16()   whether the caller may keep GEMM operands in bf16
//            wrap_operand(g)     a GemmOperand<Scalar> (exec/gemm_operand.hpp) as a Gathered
//            compute_space()     the execution space the caller's own kernels run on
//            torus()             the mesh and its rings
//   work     compute(name, LocalWork, work)          the caller's kernels, with what they cost
//            communicate(name, axis, CommWork, work) its blocking communication over a ring
//            phase(name, work)                       a named span of the step (the trace)
#include <cstddef>
#include <type_traits>
#include <utility>

#include "exec/caller_work.hpp"
#include "exec/executor_interface.hpp"
#include "exec/gemm_operand.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

namespace training_executor_detail {

template <class...>
using void_t = void;

struct Work {
  void operator()() const {}
};

template <class E>
E& ex();

#define MESHSLICE_TRAINING_MEMBER(name, ...) \
  template <class E, class = void>           \
  struct has_##name : std::false_type {};    \
  template <class E>                         \
  struct has_##name<E, void_t<decltype(__VA_ARGS__)>> : std::true_type {};

MESHSLICE_TRAINING_MEMBER(types, std::declval<typename E::Scalar&>() = 1,
                          std::bool_constant<E::holds_data>{})
MESHSLICE_TRAINING_MEMBER(data,
                          std::declval<typename E::Mat&>() = ex<E>().wrap(
                              ex<E>().real().alloc(std::size_t{1}, std::size_t{1}, "label")),
                          ex<E>().compute_space(), static_cast<const Torus&>(ex<E>().torus()))
MESHSLICE_TRAINING_MEMBER(shared_operand,
                          std::declval<typename E::Gathered&>() =
                              ex<E>().shared_operand(std::declval<const typename E::Mat&>()),
                          ex<E>().reserve_shared_operand(std::size_t{1}, std::size_t{1}))
MESHSLICE_TRAINING_MEMBER(kept_operands, static_cast<bool>(ex<E>().keeps_operands_in_bf16()),
                          std::declval<typename E::Gathered&>() = ex<E>().wrap_operand(
                              std::declval<const GemmOperand<typename E::Scalar>&>()))
MESHSLICE_TRAINING_MEMBER(compute, ex<E>().compute("name", LocalWork{}, Work{}))
MESHSLICE_TRAINING_MEMBER(communicate, ex<E>().communicate("name", Axis::tp, CommWork{}, Work{}))
MESHSLICE_TRAINING_MEMBER(phase, ex<E>().phase("name", Work{}))

#undef MESHSLICE_TRAINING_MEMBER

}  // namespace training_executor_detail

// Names the first missing member of the contract in the compiler's error.
template <class E>
constexpr bool check_training_executor() {
  using namespace training_executor_detail;
  static_assert(is_executor_v<E>, "a training-step executor is a GEMM executor first");
  static_assert(has_types<E>::value, "training executor lacks Scalar or holds_data");
  static_assert(has_data<E>::value, "training executor lacks real(), wrap(), compute_space() "
                                    "or torus()");
  static_assert(has_shared_operand<E>::value,
                "training executor lacks shared_operand(m) or reserve_shared_operand(rows, cols)");
  static_assert(has_kept_operands<E>::value,
                "training executor lacks keeps_operands_in_bf16() or wrap_operand(g)");
  static_assert(has_compute<E>::value, "training executor lacks compute(name, LocalWork, work)");
  static_assert(has_communicate<E>::value,
                "training executor lacks communicate(name, axis, CommWork, work)");
  static_assert(has_phase<E>::value, "training executor lacks phase(name, work)");
  return true;
}

template <class E>
constexpr bool is_training_executor_v = check_training_executor<E>();

}  // namespace meshslice
