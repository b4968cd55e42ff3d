#pragma once
// A distributed GEMM planned once and run many times: C = alpha op(A) op(B) + beta C with one
// algorithm, dataflow, mesh and slicing. Creating the plan checks the configuration (a UserError
// on every rank when it cannot run) and allocates every buffer the algorithm needs: gather
// buffers, partial outputs, packing and unpacking buffers, the collectives' scratch and host
// staging. run() allocates nothing, and waits only for the operations it started, so work the
// caller has in flight on the same executor (a data-parallel all-reduce) keeps progressing
// through it.
//
//     RealExecutor<float> ex(torus, comm);
//     GemmPlan<RealExecutor<float>> plan(ex, Algorithm::meshslice, {Dataflow::OS, M, N, K}, {4, 8});
//     for (...) plan.run(a, b, c, 1.0, 1.0);   // accumulate into c
//
// A and B are the executor's GEMM operands (a matrix converts to one): a bf16 run may keep them
// in bf16 (exec/gemm_operand.hpp), which MeshSlice, Collective and one chip's GEMM take as they
// are; the other algorithms move float matrices (takes_bf16_operands()).
//
// How a plan owns its buffers without each algorithm being split in two: the algorithm is
// rehearsed once at creation on shape-only placeholders with the plan's workspace attached to
// the executor (nothing executes; every buffer and scratch it asks for is recorded), and each run
// replays it against the real shards, getting the same buffers back (exec/workspace.hpp). The
// same plan type drives the emulating executor (sim::SimExecutor) and the combined one.
#include <string>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "exec/executor_interface.hpp"
#include "exec/workspace.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/cannon.hpp"
#include "gemm/fsdp.hpp"
#include "gemm/meshslice.hpp"
#include "gemm/summa.hpp"
#include "gemm/tp1d.hpp"
#include "gemm/wang.hpp"

namespace meshslice {

// UserError unless a, b and c have the shard shapes `algorithm` keeps on this chip.
template <class Exec>
void check_shards(const Exec& ex, Algorithm algorithm, const GemmProblem& p,
                  const typename Exec::Gathered& a, const typename Exec::Gathered& b,
                  const typename Exec::Mat& c) {
  const char names[] = {'A', 'B', 'C'};
  const std::size_t extents[3][2] = {
      {a.extent(0), a.extent(1)}, {b.extent(0), b.extent(1)}, {c.extent(0), c.extent(1)}};
  for (int m = 0; m < 3; ++m) {
    const ShardRegion want = shard_region(algorithm, p, names[m], ex.mesh_rows(), ex.mesh_cols(),
                                          ex.coord(Axis::row), ex.coord(Axis::col));
    require(extents[m][0] == want.rows && extents[m][1] == want.cols, algorithm_name(algorithm),
            " ", p.str(), ": the shard of ", names[m], " is ", extents[m][0], "x", extents[m][1],
            " but must be ", want.rows, "x", want.cols);
  }
}

template <class Exec>
class GemmPlan {
  static_assert(is_executor_v<Exec>);

 public:
  using Mat = typename Exec::Mat;
  using Operand = typename Exec::Gathered;  // a GEMM operand: a matrix, or one kept in bf16

  GemmPlan(Exec& ex, Algorithm algorithm, const GemmProblem& problem, const GemmOptions& options)
      : ex_(ex),
        algorithm_(algorithm),
        problem_(problem),
        region_(std::string("meshslice::gemm ") + algorithm_name(algorithm) + " " +
                dataflow_name(problem.flow)) {
    check_layout(algorithm, problem, ex.mesh_rows(), ex.mesh_cols());
    require(options.slices >= 1 && options.block >= 1, "slice count S=", options.slices,
            " and block size B=", options.block, " must both be >= 1");
    // A single slice has no blocks to interleave: B only matters for S > 1. Collective is
    // MeshSlice with one slice.
    const int slices = algorithm == Algorithm::collective ? 1 : options.slices;
    options_ = options;
    options_.slices = slices;
    options_.block = slices == 1 ? 1 : options.block;
    workspace_.rehearse();
    auto shape = [&](char matrix) {
      const ShardRegion r = shard(matrix);
      return ex.placeholder(r.rows, r.cols);
    };
    execute(shape('A'), shape('B'), shape('C'), Scale{});
    // On one chip every algorithm is its local GEMM (execute()): the configuration was checked
    // above as on any mesh, the plan keeps no buffers, and it is rehearsed again as it will run.
    if (ex.mesh_rows() == 1 && ex.mesh_cols() == 1) {
      one_chip_ = true;
      workspace_.rehearse();
      execute(shape('A'), shape('B'), shape('C'), Scale{});
    }
  }

  // C = alpha op(A) op(B) + beta C on the caller's shards (shapes as shard_region() says).
  void run(const Operand& a, const Operand& b, const Mat& c, double alpha = 1, double beta = 0) {
    check_shards(ex_, algorithm_, problem_, a, b, c);
    workspace_.replay();
    execute(a, b, c, Scale{alpha, beta});
    workspace_.check_replayed();
  }

  Algorithm algorithm() const { return algorithm_; }
  const GemmProblem& problem() const { return problem_; }
  const GemmOptions& options() const { return options_; }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }  // held between runs
  // Where this chip's shard of 'A', 'B' or 'C' lies in the matrix, and its shape.
  ShardRegion shard(char matrix) const {
    return shard_region(algorithm_, problem_, matrix, ex_.mesh_rows(), ex_.mesh_cols(),
                        ex_.coord(Axis::row), ex_.coord(Axis::col));
  }
  // Whether run() takes operands kept in bf16: the algorithms that gather slices of the 2D
  // shards (and one chip's GEMM); the others move float matrices.
  bool takes_bf16_operands() const {
    return one_chip_ || algorithm_ == Algorithm::meshslice || algorithm_ == Algorithm::collective;
  }
  // A bf16 run multiplies in bf16: a caller's operand that reaches a local GEMM as given (the
  // stationary one of LS and RS, both on one chip; gathered slices travel in bf16) is rounded
  // there, in the executor's scratch, unless it arrives kept in bf16. Sizes that scratch now for
  // the operands that will arrive in float (a_in_bf16, b_in_bf16: the caller keeps A, B in
  // bf16), so that run() allocates nothing. The algorithms that move float matrices round every
  // operand: their own buffers' scratch was sized by the rehearsal.
  void reserve_rounding(bool a_in_bf16, bool b_in_bf16) {
    const bool kept = takes_bf16_operands();
    ex_.reserve_rounding(kept && a_in_bf16 ? 0 : workspace_.operand_as_given(0),
                         kept && b_in_bf16 ? 0 : workspace_.operand_as_given(1));
  }

 private:
  // Runs the algorithm with the workspace attached. On one chip every algorithm is its local
  // GEMM: the shards are the whole matrices and there is nothing to gather, scatter or overlap,
  // so nothing is sliced, packed or copied (one BLAS call instead of S, with their packing
  // kernels and copies: a GPU pays each launch in latency).
  void execute(const Operand& a, const Operand& b, const Mat& c, const Scale& k) {
    const AttachedWorkspace<Exec> attached(ex_, workspace_);
    const ProfilingRegion region(region_);
    if (one_chip_)
      return ex_.gemm(k.alpha, a, problem_.flow == Dataflow::RS, b, problem_.flow == Dataflow::LS,
                      k.beta, c);
    if (algorithm_ == Algorithm::meshslice || algorithm_ == Algorithm::collective)
      return meshslice_gemm(ex_, problem_, a, b, c, options_, k);
    const Mat& a_matrix = ex_.matrix_of(a);
    const Mat& b_matrix = ex_.matrix_of(b);
    switch (algorithm_) {
      case Algorithm::summa: return summa_gemm(ex_, problem_, a_matrix, b_matrix, c, options_, k);
      case Algorithm::cannon: return cannon_gemm(ex_, problem_, a_matrix, b_matrix, c, options_, k);
      case Algorithm::wang: return wang_gemm(ex_, problem_, a_matrix, b_matrix, c, options_, k);
      case Algorithm::tp1d: return tp1d_gemm(ex_, problem_, a_matrix, b_matrix, c, options_, k);
      case Algorithm::fsdp: return fsdp_gemm(ex_, problem_, a_matrix, b_matrix, c, options_, k);
      default: break;
    }
    throw std::logic_error("GemmPlan: unknown algorithm");
  }

  Exec& ex_;
  Algorithm algorithm_;
  GemmProblem problem_;
  GemmOptions options_;
  std::string region_;  // the Kokkos profiling region of every run
  typename Exec::Workspace workspace_;
  bool one_chip_ = false;  // a 1 x 1 mesh: run() is the local GEMM
};

}  // namespace meshslice
