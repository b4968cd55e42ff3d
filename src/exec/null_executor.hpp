#pragma once
// The real side of a data-free combined executor: sim::CombinedExecutor<NullExecutor<T>> runs a
// caller written over any executor (model/transformer.hpp, model/trainer.hpp) with no data and no
// real work, only the emulated chip's timing, so a training step can be emulated at shapes and
// mesh sizes no host could run (meshslice-train's train.emulate_only).
//
// The mesh is virtual: this rank stands for chip (0, 0) of replica 0 of its pipeline stage on a
// dp x pp x rows x cols mesh. The chips of a stage and the replicas do the same work, so one
// rank per stage emulates the whole machine; the MPI job's torus is pp x 1 x 1 (one rank per
// stage) and carries only the pipeline messages' emulated clocks (the combined executor's).
//
//     Torus stages(MPI_COMM_WORLD, {1, pp, 1, 1});
//     NullExecutor<float> null(stages, {dp, pp, rows, cols});
//     sim::CombinedExecutor<NullExecutor<float>> ex(null, machine);
//
// Buffers are views without memory (their extents only); ops complete at once; compute() and
// communicate() do not run the caller's work.
#include <cstddef>

#include "comm/comm_scratch.hpp"
#include "comm/slicing.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "exec/caller_work.hpp"
#include "exec/executor_interface.hpp"
#include "exec/starts_collectives.hpp"
#include "exec/workspace.hpp"
#include "mesh/torus.hpp"

namespace meshslice::sim {

template <class T>
class NullExecutor : public StartsCollectives<NullExecutor<T>, Matrix<T>> {
 public:
  using Scalar = T;
  using Mat = Matrix<T>;
  using OpId = std::size_t;
  using Workspace = meshslice::Workspace<Mat, CommScratch<T, MemSpace>>;
  static constexpr bool holds_data = false;

  // `stages`: the MPI job, one rank per pipeline stage; `mesh`: the emulated machine's mesh.
  NullExecutor(const Torus& stages, const MeshShape& mesh) : stages_(stages), mesh_(mesh) {
    require(stages.size(Axis::pp) == mesh.pp && stages.shape().total() == mesh.pp,
            "data-free emulation runs one MPI rank per pipeline stage: ", mesh.pp,
            " rank(s) for mesh.pp = ", mesh.pp, ", not ", stages.shape().total());
  }

  int mesh_rows() const { return mesh_.rows; }
  int mesh_cols() const { return mesh_.cols; }
  int coord(Axis axis) const { return axis == Axis::pp ? stages_.coord(Axis::pp) : 0; }
  int size(Axis axis) const { return mesh_.size(axis); }
  const Torus& torus() const { return stages_; }
  const ExecSpace& compute_space() const { return space_; }
  NullExecutor& real() { return *this; }
  const Mat& wrap(const Mat& m) const { return m; }
  // train.precision bf16: the model keeps in bf16 what a bf16 run keeps
  // (RealExecutor::round_gemm_operands_to_bf16), so that its memory is that run's; nothing is
  // rounded, there is no data.
  void keep_operands_in_bf16() { bf16_ = true; }
  bool keeps_operands_in_bf16() const { return bf16_; }
  // A caller's GEMM operand as the GEMMs take it: its shape (one kept in bf16 lives in the memory
  // of half as many elements of T).
  Mat wrap_operand(const GemmOperand<T>& g) const { return placeholder(g.extent(0), g.extent(1)); }

  Mat alloc(std::size_t rows, std::size_t cols, const char*) {
    if (!workspace_) return placeholder(rows, cols);
    return workspace_->buffer(rows, cols, [&] { return placeholder(rows, cols); });
  }
  // A partial all-gather's output for a GEMM: kept in bf16, in the memory of half as many
  // elements as RealExecutor's (only its size matters here: the emulated side has the shapes).
  Mat alloc_gathered(std::size_t rows, std::size_t cols, const char* label) {
    if (!bf16_) return alloc(rows, cols, label);
    return alloc(1, elements_holding<T, bfloat16>(rows * cols), label);
  }
  Mat placeholder(std::size_t rows, std::size_t cols) const {
    return Mat(static_cast<T*>(nullptr), rows, cols);
  }
  void use_workspace(Workspace* workspace) { workspace_ = workspace; }
  Mat rows(const Mat& x, std::size_t first, std::size_t count) const {
    return matrix_rows(x, first, count);
  }

  void slice(const Mat&, const Mat&, MatrixDim, const SliceSpec&) {}
  void unslice(const Mat&, const Mat&, MatrixDim, const SliceSpec&, double = 0) {}
  void copy(const Mat&, const Mat&) {}
  void zero(const Mat&) {}
  void scale(const Mat&, double) {}
  void gemm(double, const Mat&, bool, const Mat&, bool, double, const Mat&) {}

  OpId start(const Collective<Mat>&) { return op(); }
  void wait(OpId) {}
  void wait_all() {}

  // The caller's own work is not run: only its cost reaches the emulated chip.
  template <class F>
  void compute(const char*, const LocalWork&, F&&) {}
  template <class F>
  void communicate(const char*, Axis, const CommWork&, F&&) {}
  template <class F>
  void phase(const char*, F&& work) {
    work();
  }

 private:
  OpId op() { return next_op_++; }

  const Torus& stages_;
  MeshShape mesh_;
  ExecSpace space_;
  Workspace* workspace_ = nullptr;
  OpId next_op_ = 0;
  bool bf16_ = false;  // keep_operands_in_bf16()
};

}  // namespace meshslice::sim
