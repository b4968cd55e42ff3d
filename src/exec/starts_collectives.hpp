#pragma once
// The named collective starts that the GEMM algorithms and the model call, given to every
// executor by inheriting StartsCollectives<Executor, Mat>: each only describes its collective
// (comm/collective.hpp) and hands it to the executor's one start(const Collective<Mat>&).
#include <cstddef>
#include <optional>

#include "comm/collective.hpp"
#include "comm/slicing.hpp"
#include "exec/gemm_operand.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

template <class Executor, class Mat>
class StartsCollectives {
 public:
  // What a partial all-gather fills for a GEMM to read, and its allocation: a matrix, unless the
  // executor has its own (RealExecutor's GemmOperand, which a bf16 run gathers in bf16).
  using Gathered = Mat;
  Gathered alloc_gathered(std::size_t rows, std::size_t cols, const char* label) {
    return static_cast<Executor&>(*this).alloc(rows, cols, label);
  }
  // The matrix a GEMM operand is (for the algorithms that take matrices only).
  const Mat& matrix_of(const Gathered& g) const { return g; }
  // m as the operand of several GEMMs: itself (RealExecutor's bf16 run rounds it once).
  Gathered shared_operand(const Mat& m) { return m; }
  void reserve_shared_operand(std::size_t, std::size_t) {}
  // Scratch in which a bf16 run rounds GEMM operands that arrive in float (RealExecutor's).
  void reserve_rounding(std::size_t, std::size_t) {}
  // Host staging for messages started without a plan (RealExecutor's, staged); bytes made.
  std::size_t reserve_messages(std::size_t, std::size_t) { return 0; }
  // Whether the caller may keep GEMM operands in bf16: only RealExecutor's bf16 run.
  bool keeps_operands_in_bf16() const { return false; }
  // A caller's GEMM operand (exec/gemm_operand.hpp, never in bf16 here) as this executor's.
  template <class T>
  const Mat& wrap_operand(const GemmOperand<T>& g) const {
    return g.value;
  }

  auto start_all_gather(Axis axis, const Mat& local, const Mat& out, MatrixDim dim) {
    return begin(CommKind::all_gather, axis, local, out, dim);
  }
  auto start_reduce_scatter(Axis axis, const Mat& in, const Mat& out, MatrixDim dim) {
    return begin(CommKind::reduce_scatter, axis, in, out, dim);
  }
  auto start_all_reduce(Axis axis, const Mat& in, const Mat& out) {
    return begin(CommKind::all_reduce, axis, in, out);
  }
  auto start_broadcast(Axis axis, const Mat& buffer, int root) {
    return begin(CommKind::broadcast, axis, buffer, buffer, MatrixDim::rows, {}, 0, root);
  }
  auto start_reduce(Axis axis, const Mat& in, const Mat& out, int root) {
    return begin(CommKind::reduce, axis, in, out, MatrixDim::rows, {}, 0, root);
  }
  // Periodic: the ring wraps around.
  auto start_shift(Axis axis, const Mat& in, const Mat& out, int displacement) {
    return begin(CommKind::shift, axis, in, out, MatrixDim::rows, {}, 0, displacement);
  }
  // To (from) coord + displacement, without wrap-around: the link between pipeline stages.
  auto start_send(Axis axis, const Mat& buffer, int displacement, int channel = 0) {
    return begin(CommKind::send, axis, buffer, buffer, MatrixDim::rows, {}, 0, displacement,
                 channel);
  }
  auto start_recv(Axis axis, const Mat& buffer, int displacement, int channel = 0) {
    return begin(CommKind::recv, axis, buffer, buffer, MatrixDim::rows, {}, 0, displacement,
                 channel);
  }
  // The all-gather of sub-shard `slice` of `local` along `dim`.
  auto start_partial_all_gather(Axis axis, const Mat& local, const Mat& out, MatrixDim dim,
                                const SliceSpec& slice) {
    return begin(CommKind::all_gather, axis, local, out, dim, slice);
  }
  // The reduce-scatter of `contribution` into slice `slice` of `shard`
  // (slice = reduced + beta * slice).
  auto start_partial_reduce_scatter(Axis axis, const Mat& contribution, const Mat& shard,
                                    MatrixDim dim, const SliceSpec& slice, double beta = 0) {
    return begin(CommKind::reduce_scatter, axis, contribution, shard, dim, slice, beta);
  }

 private:
  auto begin(CommKind kind, Axis axis, const Mat& in, const Mat& out,
             MatrixDim dim = MatrixDim::rows, std::optional<SliceSpec> slice = std::nullopt,
             double beta = 0, int peer = 0, int channel = 0) {
    return static_cast<Executor&>(*this).start(
        Collective<Mat>{kind, axis, in, out, dim, slice, beta, peer, channel});
  }
};

}  // namespace meshslice
