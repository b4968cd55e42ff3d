#pragma once
// Partial collectives of MeshSlice (paper Fig. 5): the collective of the s-th sub-shard only.
//
// ipartial_all_gather slices the local shard along `dim` (Alg. 2) and gathers the sub-shards of
// all ring ranks along the same dim: for A in the OS dataflow, slice_col + AG_col gives
//   A' = [a_(s), a_(s+S), ...]  in global column order, block-wise.
// ipartial_reduce_scatter reduce-scatters a partial result along `dim` and scatters the reduced
// sub-shard back into slice s of the output shard (C_s = RdS(C') of the LS/RS dataflows).
#include "comm/collectives.hpp"
#include "comm/slicing.hpp"
#include "core/bfloat16.hpp"

namespace meshslice {

// out: the gathered sub-shards, shape of `local` with the sliced dim divided by S and multiplied
// by the ring size. T: float, double or bfloat16 (a bf16 run's operand kept in bf16).
template <class T, class Space>
Request ipartial_all_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                            const Matrix<T, Space>& out, MatrixDim dim, const SliceSpec& slice,
                            const CommOptions& options = {},
                            const CommScratch<T, Space>& scratch = {});

// The same gather in bf16: the sub-shard is rounded to bf16 as it is sliced and the ring moves
// half the bytes; `out` holds the gathered sub-shards in bf16. A bf16 run's GEMM operands travel
// this way (exec/gemm_operand.hpp); the rounding is the one its GEMM would do anyway.
template <class Space>
Request ipartial_all_gather_rounded(const AxisComm& ring, const Matrix<float, Space>& local,
                                    const Matrix<bfloat16, Space>& out, MatrixDim dim,
                                    const SliceSpec& slice, const CommOptions& options = {},
                                    const CommScratch<bfloat16, Space>& scratch = {});

// contribution: the partial product, shape of `shard` with the sliced dim divided by S and
// multiplied by the ring size. On completion slice s of `shard` holds the reduced sub-shard plus
// beta times what it held (beta = 0: overwritten, never read); the other slices are untouched.
// Scratch: partial_reduce_scatter_scratch() of the sub-shard's element count.
template <class T, class Space>
Request ipartial_reduce_scatter(const AxisComm& ring, const Matrix<T, Space>& contribution,
                                const Matrix<T, Space>& shard, MatrixDim dim,
                                const SliceSpec& slice, const CommOptions& options = {},
                                double beta = 0.0, const CommScratch<T, Space>& scratch = {});

template <class T, class Space>
void partial_all_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                        const Matrix<T, Space>& out, MatrixDim dim, const SliceSpec& slice,
                        const CommOptions& options = {}) {
  ipartial_all_gather(ring, local, out, dim, slice, options).wait();
}

template <class T, class Space>
void partial_reduce_scatter(const AxisComm& ring, const Matrix<T, Space>& contribution,
                            const Matrix<T, Space>& shard, MatrixDim dim, const SliceSpec& slice,
                            const CommOptions& options = {}) {
  ipartial_reduce_scatter(ring, contribution, shard, dim, slice, options).wait();
}

}  // namespace meshslice
