#pragma once
// A distributed GEMM: the dataflow, the global shapes of A, B and C, and the shards of
// the three matrices on a Pr x Pc mesh, where chip (i, j) holds block (i, j) of each:
//   OS: A shard M/Pr x K/Pc, B K/Pr x N/Pc;  LS: A M/Pr x K/Pc, B N/Pr x K/Pc;
//   RS: A K/Pr x M/Pc, B K/Pr x N/Pc;  C M/Pr x N/Pc in all three.
#include <cstddef>
#include <string>

#include "gemm/dataflow.hpp"

namespace meshslice {

struct MatrixShape {
  std::size_t rows = 0;
  std::size_t cols = 0;
};

struct GemmProblem {
  Dataflow flow = Dataflow::OS;
  std::size_t M = 0;
  std::size_t N = 0;
  std::size_t K = 0;

  MatrixShape global_a() const;
  MatrixShape global_b() const;
  MatrixShape global_c() const { return {M, N}; }
  MatrixShape shard_a(int mesh_rows, int mesh_cols) const;
  MatrixShape shard_b(int mesh_rows, int mesh_cols) const;
  MatrixShape shard_c(int mesh_rows, int mesh_cols) const;
  std::string str() const;  // "OS M=.. N=.. K=.."
};

// UserError naming the sizes unless every matrix splits evenly over the mesh.
void check_distributable(const GemmProblem& problem, int mesh_rows, int mesh_cols);

// The dimension MeshSlice cuts into S sub-shards for a dataflow: K for OS, N for LS, M for RS.
struct SlicedDimension {
  const char* name;
  std::size_t extent;
};
SlicedDimension sliced_dimension(const GemmProblem& problem);

// UserError naming the sizes unless S, B >= 1 and S*B divides the per-chip share of `dim` when
// it is split `parts` ways. `who` names the algorithm in the message.
void check_slice_split(const std::string& who, const GemmProblem& problem, SlicedDimension dim,
                       int parts, int slices, int block);

// UserError naming the sizes unless MeshSlice can slice this problem into S sub-shards of
// B-blocks: the sliced dimension (K for OS, N for LS, M for RS) must be divisible by S*B in
// the shards on both mesh axes.
void check_sliceable(const GemmProblem& problem, int mesh_rows, int mesh_cols, int slices,
                     int block);

}  // namespace meshslice
