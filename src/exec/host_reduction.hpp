#pragma once
// A caller's reduction of a few host values over mesh axes, ring by ring, each ring's through
// the executor's communicate(): the real executor records and traces it, an emulating one times
// it (exec/training_executor.hpp). Axes of one rank are skipped.
//
//     reduce_through(ex, "gather", {Axis::tp, Axis::pp}, sums.data(), n, MPI_DOUBLE, MPI_SUM);
//     reduce_through(ex, "next_token", {Axis::tp, Axis::pp, Axis::dp}, &token, 1, MPI_INT,
//                    MPI_MAX);  // over the job
#include <mpi.h>

#include <cstddef>
#include <initializer_list>

#include "comm/host_collectives.hpp"
#include "exec/caller_work.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

template <class Exec, class V>
void reduce_through(Exec& ex, const char* name, std::initializer_list<Axis> axes, V* values,
                    std::size_t n, MPI_Datatype type, MPI_Op op) {
  for (const Axis axis : axes)
    if (ex.size(axis) > 1)
      ex.communicate(name, axis, {CommWork::all_reduce, static_cast<double>(n)},
                     [&] { reduce_over(ex.torus().axis(axis), values, n, type, op); });
}

}  // namespace meshslice
