#include "gemm/gemm_problem.hpp"

#include "core/errors.hpp"

namespace meshslice {

// OS: C = A(MxK) B(KxN);  LS: C = A(MxK) B(NxK)^T;  RS: C = A(KxM)^T B(KxN).
MatrixShape GemmProblem::global_a() const {
  return flow == Dataflow::RS ? MatrixShape{K, M} : MatrixShape{M, K};
}

MatrixShape GemmProblem::global_b() const {
  return flow == Dataflow::LS ? MatrixShape{N, K} : MatrixShape{K, N};
}

namespace {
MatrixShape shard_of(MatrixShape global, int mesh_rows, int mesh_cols) {
  return {global.rows / mesh_rows, global.cols / mesh_cols};
}

void check_split(const char* matrix, MatrixShape global, int mesh_rows, int mesh_cols) {
  require(global.rows % mesh_rows == 0 && global.cols % mesh_cols == 0, "matrix ", matrix, " is ",
          global.rows, "x", global.cols, " and cannot be split evenly over a ", mesh_rows, "x",
          mesh_cols, " mesh: its rows must be divisible by ", mesh_rows, " and its columns by ",
          mesh_cols);
}
}  // namespace

MatrixShape GemmProblem::shard_a(int r, int c) const { return shard_of(global_a(), r, c); }
MatrixShape GemmProblem::shard_b(int r, int c) const { return shard_of(global_b(), r, c); }
MatrixShape GemmProblem::shard_c(int r, int c) const { return shard_of(global_c(), r, c); }

std::string GemmProblem::str() const {
  return concat(dataflow_name(flow), " M=", M, " N=", N, " K=", K);
}

void check_distributable(const GemmProblem& problem, int mesh_rows, int mesh_cols) {
  require(problem.M > 0 && problem.N > 0 && problem.K > 0, "GEMM shapes must be positive, got ",
          problem.str());
  check_split("A", problem.global_a(), mesh_rows, mesh_cols);
  check_split("B", problem.global_b(), mesh_rows, mesh_cols);
  check_split("C", problem.global_c(), mesh_rows, mesh_cols);
}

SlicedDimension sliced_dimension(const GemmProblem& problem) {
  switch (problem.flow) {
    case Dataflow::OS: return {"K", problem.K};
    case Dataflow::LS: return {"N", problem.N};
    case Dataflow::RS: return {"M", problem.M};
  }
  return {"?", 0};
}

void check_slice_split(const std::string& who, const GemmProblem& problem, SlicedDimension dim,
                       int parts, int slices, int block) {
  require(slices >= 1 && block >= 1, who, ": slice count S=", slices, " and block size B=", block,
          " must both be >= 1");
  const std::size_t local = dim.extent / parts;
  const std::size_t unit = static_cast<std::size_t>(slices) * block;
  require(local % unit == 0, who, " ", dataflow_name(problem.flow), " slices ", dim.name, "=",
          dim.extent, ", which is ", local, " per chip when split ", parts, " ways; S*B = ", slices,
          "*", block, " = ", unit, " must divide ", local, ". Choose S and B with S*B dividing ",
          local);
}

void check_sliceable(const GemmProblem& problem, int mesh_rows, int mesh_cols, int slices,
                     int block) {
  for (int parts : {mesh_rows, mesh_cols})
    check_slice_split("MeshSlice", problem, sliced_dimension(problem), parts, slices, block);
}

}  // namespace meshslice
