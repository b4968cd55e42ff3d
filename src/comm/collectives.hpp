#pragma once
// Collectives along one ring of the torus, on row-major Kokkos matrix shards.
//
// Each comes non-blocking (i-prefixed, returns a Request; the inputs must stay unchanged and the
// outputs untouched until it completes, as in MPI) and blocking. `dim` says which matrix
// dimension is gathered/scattered: the i-th block of rows (MatrixDim::rows) or of columns
// (MatrixDim::cols) of a gathered matrix belongs to ring rank i. Sums use MPI_SUM.
// Shapes are checked and a mismatch is a UserError naming the sizes.
#include <functional>

#include "comm/comm_options.hpp"
#include "comm/request.hpp"
#include "core/kokkos_types.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// out (P*r x c for rows, r x P*c for cols) = the local r x c shards of all ring ranks.
template <class T, class Space>
Request iall_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                    const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options = {});

// The same all-gather for a local shard that is produced rather than given: produce(block)
// writes this rank's rows x cols shard straight into its place in the gather buffer, which
// saves a full copy when the shard is computed anyway (MeshSlice's sliced sub-shards).
template <class T, class Space>
Request iall_gather_produced(const AxisComm& ring, std::size_t rows, std::size_t cols,
                             const std::function<void(const Matrix<T, Space>&)>& produce,
                             const Matrix<T, Space>& out, MatrixDim dim,
                             const CommOptions& options = {});

// out (r x c) = sum over ring ranks of block rank() of their input (P*r x c or r x P*c).
template <class T, class Space>
Request ireduce_scatter(const AxisComm& ring, const Matrix<T, Space>& in,
                        const Matrix<T, Space>& out, MatrixDim dim,
                        const CommOptions& options = {});

// out = sum over ring ranks of in (same shape; out may be in itself).
template <class T, class Space>
Request iall_reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                    const CommOptions& options = {});

// buffer on every rank = buffer of ring rank `root`.
template <class T, class Space>
Request ibroadcast(const AxisComm& ring, const Matrix<T, Space>& buffer, int root,
                   const CommOptions& options = {});

// out on ring rank `root` = sum over ring ranks of in; out elsewhere is left unchanged.
template <class T, class Space>
Request ireduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                int root, const CommOptions& options = {});

// out = in of ring rank (rank - displacement): every shard moves `displacement` steps along the
// ring (Cannon's and Wang's systolic shifts). in and out must not alias.
template <class T, class Space>
Request ishift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
               int displacement, const CommOptions& options = {});

// Blocking forms.
template <class T, class Space>
void all_gather(const AxisComm& ring, const Matrix<T, Space>& local, const Matrix<T, Space>& out,
                MatrixDim dim, const CommOptions& options = {}) {
  iall_gather(ring, local, out, dim, options).wait();
}
template <class T, class Space>
void reduce_scatter(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                    MatrixDim dim, const CommOptions& options = {}) {
  ireduce_scatter(ring, in, out, dim, options).wait();
}
template <class T, class Space>
void all_reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                const CommOptions& options = {}) {
  iall_reduce(ring, in, out, options).wait();
}
template <class T, class Space>
void broadcast(const AxisComm& ring, const Matrix<T, Space>& buffer, int root,
               const CommOptions& options = {}) {
  ibroadcast(ring, buffer, root, options).wait();
}
template <class T, class Space>
void reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
            int root, const CommOptions& options = {}) {
  ireduce(ring, in, out, root, options).wait();
}
template <class T, class Space>
void shift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
           int displacement, const CommOptions& options = {}) {
  ishift(ring, in, out, displacement, options).wait();
}

}  // namespace meshslice
