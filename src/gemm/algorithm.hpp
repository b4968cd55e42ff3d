#pragma once
// The distributed GEMM algorithms behind one interface, and where each keeps its shards.
//
// 2D algorithms (MeshSlice, Collective, SUMMA, Cannon, Wang) shard every matrix in Pr x Pc
// blocks: chip (i, j) holds block (i, j) (see gemm_problem.hpp). 1D tensor parallelism and
// FSDP treat the row x col group as one ring of P = Pr * Pc chips (Axis::tp, chip t = i*Pc + j)
// and split whole rows or columns over it:
//   1D TP (Megatron, sequence parallel):  OS  A rows,  B cols,  C cols   (AG A before)
//                                         LS  A cols,  B cols,  C rows   (RdS C after)
//                                         RS  A rows,  B cols,  C cols   (AG A before)
//   FSDP (weights sharded, data parallel): OS  A rows,  B rows,  C rows   (AG B before use)
//                                         LS  A rows,  B rows,  C rows   (AG B before use)
//                                         RS  A rows,  B rows,  C rows   (RdS C, the gradient)
#include <string>
#include <vector>

#include "gemm/gemm_problem.hpp"

namespace meshslice {

enum class Algorithm { meshslice, collective, summa, cannon, wang, tp1d, fsdp };

const char* algorithm_name(Algorithm algorithm);  // "meshslice", ..., "1dtp", "fsdp"
Algorithm parse_algorithm(const std::string& name);
const std::vector<Algorithm>& all_algorithms();

// The collective Wang decomposes into shifts (the other one stays whole): the col ring's in
// every dataflow, as the MeshSlice authors' code does (A's all-gather in OS and RS, C's
// reduce-scatter in LS), or the row ring's (B's all-gather in OS and LS, C's reduce-scatter in
// RS).
enum class WangRing { col, row };
const char* wang_ring_name(WangRing ring);  // "col", "row"

struct GemmOptions {
  int slices = 1;  // S: MeshSlice sub-shards, SUMMA iterations, Wang's shift steps grouping
  int block = 1;   // B of the blocked slicing (paper Alg. 2)
  WangRing wang_ring = WangRing::col;  // Wang only
};

// The scalars of C = alpha op(A) op(B) + beta C, given per run (a plan is for any of them).
struct Scale {
  double alpha = 1;
  double beta = 0;
};

// Which part of global matrix 'A', 'B' or 'C' the chip at mesh (row i, col j) holds.
struct ShardRegion {
  std::size_t row0 = 0;
  std::size_t rows = 0;
  std::size_t col0 = 0;
  std::size_t cols = 0;
};

ShardRegion shard_region(Algorithm algorithm, const GemmProblem& problem, char matrix,
                         int mesh_rows, int mesh_cols, int i, int j);

// UserError naming the sizes unless every matrix splits evenly the way `algorithm` lays it out:
// in Pr x Pc blocks for the 2D algorithms, in P = Pr * Pc row or column strips for 1D TP/FSDP.
void check_layout(Algorithm algorithm, const GemmProblem& problem, int mesh_rows, int mesh_cols);

}  // namespace meshslice
