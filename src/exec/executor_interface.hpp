#pragma once
// The executor interface, declared once. Every distributed GEMM algorithm (gemm/*.hpp) is a
// template over an executor and may call exactly these members; RealExecutor (Kokkos + MPI),
// sim::SimExecutor (the hardware model), sim::CombinedExecutor (both at once) and
// sim::NullExecutor (its data-free real side) provide them, and every one is checked with
// `is_executor_v` (RealExecutor and SimExecutor in their headers, the combined and null ones in
// exec/executor_checks.cpp), so that an op added here without being added everywhere is a compile
// error naming the missing member.
//
//   types        Mat (a matrix shard), OpId (an op in flight), Workspace (a plan's buffers),
//                Gathered (what a partial all-gather fills for a GEMM: Mat, or RealExecutor's
//                GemmOperand, which a bf16 run gathers in bf16)
//   mesh         mesh_rows(), mesh_cols(), coord(axis), size(axis)
//   memory       alloc(rows, cols, label)      a buffer; from the attached workspace, if any
//                alloc_gathered(rows, cols, label)   a Gathered, likewise
//                matrix_of(gathered)           the matrix an operand is (one kept in bf16
//                                              is not one: MeshSlice alone takes those)
//                placeholder(rows, cols)       a shape without memory (a plan's rehearsal)
//                use_workspace(Workspace*)     attach (nullptr: detach) a plan's workspace
//                reserve_rounding(a, b)        scratch for a bf16 run's rounding of operands
//                                              that arrive in float (StartsCollectives: none)
//                reserve_messages(count, n)    host staging for sends and receives started
//                                              without a plan (RealExecutor's, staged)
//                rows(x, first, count)         rows [first, first + count) of x, in place: a
//                                              view, no copy (shards are row-major)
//   local        slice(x, sub, dim, spec)      sub = slice s of x (paper Alg. 2)
//                unslice(sub, x, dim, spec, beta)   slice s of x = sub + beta * slice s of x
//                copy(from, to), zero(x), scale(x, factor)
//                gemm(alpha, a, ta, b, tb, beta, c) c = alpha op(a) op(b) + beta c (a, b: Mat
//                                              or Gathered)
//   collectives  start(Collective<Mat>)       starts one collective (comm/collective.hpp: its
//   (non-                                     kind, axis, buffers and cut) and returns at once.
//   blocking)    The named starts the algorithms call (start_all_gather(axis, local, out, dim),
//                start_reduce_scatter, start_all_reduce, start_broadcast, start_reduce,
//                start_shift, start_send, start_recv, start_partial_all_gather,
//                start_partial_reduce_scatter) come from inheriting StartsCollectives<E, Mat>
//                (exec/starts_collectives.hpp): each describes its collective for start().
//   completion   wait(op): that op only; wait_all(): everything in flight, the caller's too
//
// beta == 0 never reads the destination (BLAS semantics: NaNs in it do not propagate).
//
// Workspaces (exec/workspace.hpp): while a rehearsing workspace is attached, the executor
// executes nothing: alloc() allocates and records, each collective records the scratch it will
// need, and the returned ops are already complete. While a replaying workspace is attached, the
// same calls in the same order get the recorded buffers back: nothing is allocated.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "comm/collective.hpp"
#include "comm/comm_options.hpp"
#include "comm/slicing.hpp"
#include "exec/starts_collectives.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

namespace executor_detail {

template <class...>
using void_t = void;

// One detector per member: true when `E` has it with a usable signature.
#define MESHSLICE_EXECUTOR_MEMBER(name, ...) \
  template <class E, class = void>           \
  struct has_##name : std::false_type {};    \
  template <class E>                         \
  struct has_##name<E, void_t<decltype(__VA_ARGS__)>> : std::true_type {};

template <class E>
E& ex();
template <class E>
const typename E::Mat& mat();
template <class E>
typename E::Workspace* workspace();

MESHSLICE_EXECUTOR_MEMBER(mesh, ex<E>().mesh_rows() + ex<E>().mesh_cols() +
                                    ex<E>().coord(Axis::row) + ex<E>().size(Axis::col))
MESHSLICE_EXECUTOR_MEMBER(alloc,
                          std::declval<typename E::Mat&>() = ex<E>().alloc(std::size_t{1},
                                                                           std::size_t{1}, "label"))
MESHSLICE_EXECUTOR_MEMBER(alloc_gathered,
                          std::declval<typename E::Gathered&>() =
                              ex<E>().alloc_gathered(std::size_t{1}, std::size_t{1}, "label"))
MESHSLICE_EXECUTOR_MEMBER(gemm_of_gathered,
                          ex<E>().gemm(1.0, std::declval<const typename E::Gathered&>(), false,
                                       mat<E>(), true, 0.0, mat<E>()))
MESHSLICE_EXECUTOR_MEMBER(matrix_of, std::declval<typename E::Mat&>() = ex<E>().matrix_of(
                                         std::declval<const typename E::Gathered&>()))
MESHSLICE_EXECUTOR_MEMBER(placeholder,
                          std::declval<typename E::Mat&>() = ex<E>().placeholder(std::size_t{1},
                                                                                 std::size_t{1}))
MESHSLICE_EXECUTOR_MEMBER(use_workspace, ex<E>().use_workspace(workspace<E>()))
MESHSLICE_EXECUTOR_MEMBER(rows,
                          std::declval<typename E::Mat&>() = ex<E>().rows(mat<E>(), std::size_t{0},
                                                                          std::size_t{1}))
MESHSLICE_EXECUTOR_MEMBER(slice, ex<E>().slice(mat<E>(), mat<E>(), MatrixDim::rows, SliceSpec{}))
MESHSLICE_EXECUTOR_MEMBER(unslice,
                          ex<E>().unslice(mat<E>(), mat<E>(), MatrixDim::rows, SliceSpec{}, 1.0))
MESHSLICE_EXECUTOR_MEMBER(copy, ex<E>().copy(mat<E>(), mat<E>()))
MESHSLICE_EXECUTOR_MEMBER(zero, ex<E>().zero(mat<E>()))
MESHSLICE_EXECUTOR_MEMBER(scale, ex<E>().scale(mat<E>(), 0.5))
MESHSLICE_EXECUTOR_MEMBER(gemm, ex<E>().gemm(1.0, mat<E>(), false, mat<E>(), true, 0.0, mat<E>()))
MESHSLICE_EXECUTOR_MEMBER(start, std::declval<typename E::OpId&>() = ex<E>().start(
                                     std::declval<const Collective<typename E::Mat>&>()))
MESHSLICE_EXECUTOR_MEMBER(wait,
                          (ex<E>().wait(std::declval<typename E::OpId>()), ex<E>().wait_all()))

#undef MESHSLICE_EXECUTOR_MEMBER

}  // namespace executor_detail

// Names the first missing member of the interface in the compiler's error.
template <class E>
constexpr bool check_executor() {
  using namespace executor_detail;
  static_assert(has_mesh<E>::value, "executor lacks mesh_rows/mesh_cols/coord/size");
  static_assert(has_alloc<E>::value, "executor lacks alloc(rows, cols, label)");
  static_assert(has_alloc_gathered<E>::value, "executor lacks alloc_gathered(rows, cols, label)");
  static_assert(has_gemm_of_gathered<E>::value, "executor's gemm does not take a Gathered");
  static_assert(has_matrix_of<E>::value, "executor lacks matrix_of(gathered)");
  static_assert(has_placeholder<E>::value, "executor lacks placeholder(rows, cols)");
  static_assert(has_use_workspace<E>::value, "executor lacks use_workspace(Workspace*)");
  static_assert(has_rows<E>::value, "executor lacks rows(x, first, count)");
  static_assert(has_slice<E>::value, "executor lacks slice");
  static_assert(has_unslice<E>::value, "executor lacks unslice(sub, x, dim, spec, beta)");
  static_assert(has_copy<E>::value, "executor lacks copy");
  static_assert(has_zero<E>::value, "executor lacks zero");
  static_assert(has_scale<E>::value, "executor lacks scale(x, factor)");
  static_assert(has_gemm<E>::value, "executor lacks gemm(alpha, a, ta, b, tb, beta, c)");
  static_assert(has_start<E>::value, "executor lacks start(const Collective<Mat>&)");
  static_assert(std::is_base_of_v<StartsCollectives<E, typename E::Mat>, E>,
                "executor does not inherit StartsCollectives<Executor, Mat> (the named starts)");
  static_assert(has_wait<E>::value, "executor lacks wait(op)/wait_all()");
  return true;
}

template <class E>
constexpr bool is_executor_v = check_executor<E>();

}  // namespace meshslice
