#pragma once
// ScaLAPACK's p?gemm as the baseline the distributed GEMMs are measured against: same process
// grid, same shards, same global data. Each operand keeps meshslice's distribution (global R x C
// split into rows x cols equal blocks, chip (i, j) holding block (i, j) as a row-major shard);
// ScaLAPACK sees it as a block-cyclic matrix with exactly one block per process, so no data is
// redistributed before or after the call.
//
// Built without ScaLAPACK (CMake option MESHSLICE_SCALAPACK off or library not found),
// scalapack_available() is false and every entry point throws UserError.
#include <mpi.h>

#include <cstddef>

#include "core/kokkos_types.hpp"
#include "gemm/dataflow.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

bool scalapack_available();

// A BLACS process grid over the row x col mesh of this rank's (dp, pp) group, laid out so that
// ScaLAPACK's process (p, q) is mesh chip (q, p) (see scalapack_gemm.cpp for why transposed).
// Creating one is collective over that group (it builds MPI communicators); keep it alive
// across calls to leave the setup out of timed loops. Destruction frees every communicator and
// BLACS slot it took, and never finalizes MPI.
class ScalapackGrid {
 public:
  explicit ScalapackGrid(const Torus& torus);
  ~ScalapackGrid();
  ScalapackGrid(const ScalapackGrid&) = delete;
  ScalapackGrid& operator=(const ScalapackGrid&) = delete;

  int rows() const { return rows_; }  // Pr, the torus's row axis
  int cols() const { return cols_; }  // Pc
  int row() const { return row_; }    // this chip's coordinates on the mesh
  int col() const { return col_; }
  int context() const { return context_; }  // the BLACS context handle (for descriptors)

 private:
  void release();  // frees what the constructor took; safe to call twice

  int rows_ = 1;
  int cols_ = 1;
  int row_ = 0;
  int col_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;  // the {row, col} sub-communicator the grid is built on
  int system_ = -1;                // BLACS system handle of comm_
  int context_ = -1;
};

// C = op(A) op(B) (see gemm_problem.hpp for the shapes) with ScaLAPACK p?gemm; A, B and C are this
// chip's shards. Shapes not divisible by the mesh, or shards whose extents are not the block
// this chip holds, are UserErrors raised before any communication (so on every rank alike).
// Defined for T = float (psgemm) and double (pdgemm). Shards in memory the host cannot access
// go through host mirrors.
template <class T>
void scalapack_gemm(const ScalapackGrid& grid, Dataflow flow, std::size_t M, std::size_t N,
                    std::size_t K, const Matrix<T>& A, const Matrix<T>& B, const Matrix<T>& C);

// Convenience form: validates, then builds a ScalapackGrid for this one call.
template <class T>
void scalapack_gemm(const Torus& torus, Dataflow flow, std::size_t M, std::size_t N, std::size_t K,
                    const Matrix<T>& A, const Matrix<T>& B, const Matrix<T>& C);

}  // namespace meshslice
