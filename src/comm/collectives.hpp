#pragma once
// Collectives along one ring of the torus, on row-major Kokkos matrix shards.
//
// Each comes non-blocking (i-prefixed, returns a Request; the inputs must stay unchanged and the
// outputs untouched until it completes, as in MPI) and blocking. `dim` says which matrix
// dimension is gathered/scattered: the i-th block of rows (MatrixDim::rows) or of columns
// (MatrixDim::cols) of a gathered matrix belongs to ring rank i. Sums use MPI_SUM.
// Shapes are checked and a mismatch is a UserError naming the sizes.
//
// Scratch: each non-blocking collective takes an optional CommScratch (comm/comm_scratch.hpp)
// of the size its *_scratch() function names; a plan provides it so that the collective
// allocates nothing. Without it the collective allocates what it needs.
//
// Device buffers: MPI may read an input as soon as the collective starts, so the caller fences
// the execution-space instance that wrote it first (the executors do); kernels a collective
// launches itself are fenced before MPI sees their output.
#include <functional>

#include "comm/comm_options.hpp"
#include "comm/comm_scratch.hpp"
#include "comm/request.hpp"
#include "core/kokkos_types.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// out (P*r x c for rows, r x P*c for cols) = the local r x c shards of all ring ranks.
template <class T, class Space>
Request iall_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                    const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options = {},
                    const CommScratch<T, Space>& scratch = {});

// The same all-gather for a local shard that is produced rather than given: produce(block)
// writes this rank's rows x cols shard straight into its place in the gather buffer, which
// saves a full copy when the shard is computed anyway (MeshSlice's sliced sub-shards).
template <class T, class Space>
Request iall_gather_produced(const AxisComm& ring, std::size_t rows, std::size_t cols,
                             const std::function<void(const Matrix<T, Space>&)>& produce,
                             const Matrix<T, Space>& out, MatrixDim dim,
                             const CommOptions& options = {},
                             const CommScratch<T, Space>& scratch = {});

// out (r x c) = sum over ring ranks of block rank() of their input (P*r x c or r x P*c).
template <class T, class Space>
Request ireduce_scatter(const AxisComm& ring, const Matrix<T, Space>& in,
                        const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options = {},
                        const CommScratch<T, Space>& scratch = {});

// out = sum over ring ranks of in (same shape; out may be in itself).
template <class T, class Space>
Request iall_reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                    const CommOptions& options = {}, const CommScratch<T, Space>& scratch = {});

// buffer on every rank = buffer of ring rank `root`.
template <class T, class Space>
Request ibroadcast(const AxisComm& ring, const Matrix<T, Space>& buffer, int root,
                   const CommOptions& options = {}, const CommScratch<T, Space>& scratch = {});

// out on ring rank `root` = sum over ring ranks of in; out elsewhere is left unchanged.
template <class T, class Space>
Request ireduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                int root, const CommOptions& options = {},
                const CommScratch<T, Space>& scratch = {});

// out = in of ring rank (rank - displacement): every shard moves `displacement` steps along the
// ring (Cannon's and Wang's systolic shifts). in and out must not alias.
template <class T, class Space>
Request ishift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
               int displacement, const CommOptions& options = {},
               const CommScratch<T, Space>& scratch = {});

// Point-to-point along an axis that is not a ring: send `buffer` to the rank `displacement`
// places along (isend) or receive it from there (irecv), with no wrap-around -- the link
// between neighbouring pipeline stages. A peer outside the axis is a UserError. Messages
// between the same two ranks on the same channel (0 to AxisComm::kPointToPointChannels - 1)
// match in the order they were started; a schedule that sends several kinds of message
// between two ranks gives each its own channel.
template <class T, class Space>
Request isend(const AxisComm& axis, const Matrix<T, Space>& buffer, int displacement,
              int channel = 0, const CommOptions& options = {},
              const CommScratch<T, Space>& scratch = {});
template <class T, class Space>
Request irecv(const AxisComm& axis, const Matrix<T, Space>& buffer, int displacement,
              int channel = 0, const CommOptions& options = {},
              const CommScratch<T, Space>& scratch = {});

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
void reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out, int root,
            const CommOptions& options = {}) {
  ireduce(ring, in, out, root, options).wait();
}
template <class T, class Space>
void shift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
           int displacement, const CommOptions& options = {}) {
  ishift(ring, in, out, displacement, options).wait();
}

}  // namespace meshslice
