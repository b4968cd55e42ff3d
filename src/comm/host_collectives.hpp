#pragma once
// Blocking collectives of a few host values over a mesh axis: a loss, a squared norm, the best
// logit of each column, a token id, the first parameter whose gradient is not finite, a row's
// token ids. Each one is recorded for the flight recorder (comm/recorded_op.hpp); a training
// step calls them through its executor's communicate(), so that the emulated machine times them
// too (exec/training_executor.hpp).
//
//     double loss = sum_over(torus.axis(Axis::tp), local_loss);
//     reduce_over(torus.axis(Axis::col), &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC);
//     std::vector<int> ids = all_gather_over(torus.axis(Axis::row), row_ids);
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "comm/recorded_op.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

// values[0, n) = their reduction by `op` over `ring`, in place; `type` is one value's MPI type
// (MPI_DOUBLE_INT for MPI_MAXLOC's pairs), V its C++ type.
template <class V>
void reduce_over(const AxisComm& ring, V* values, std::size_t n, MPI_Datatype type, MPI_Op op) {
  const RecordedOp recorded(ring_op(CommKind::all_reduce, ring, n, sizeof(V)));
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), type, op, ring.comm());
}

// A host scalar summed over `ring` (a loss, a squared norm).
inline double sum_over(const AxisComm& ring, double value) {
  reduce_over(ring, &value, 1, MPI_DOUBLE, MPI_SUM);
  return value;
}

// Every rank's `values` (the same count on each), in ring order.
inline std::vector<int> all_gather_over(const AxisComm& ring, const std::vector<int>& values) {
  std::vector<int> all(values.size() * static_cast<std::size_t>(ring.size()));
  const RecordedOp recorded(ring_op(CommKind::all_gather, ring, all.size(), sizeof(int)));
  MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_INT, all.data(),
                static_cast<int>(values.size()), MPI_INT, ring.comm());
  return all;
}

}  // namespace meshslice
