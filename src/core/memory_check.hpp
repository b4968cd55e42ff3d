#pragma once
// The up-front memory check every app makes before it allocates its big buffers: a
// configuration that cannot fit is refused with the sizes and the memory there is, instead of
// failing in an allocation deep inside (or being killed by the kernel after it overcommitted).
//
//     require_memory_fits("the GEMM shards and workspaces of M=8192 N=8192 K=8192",
//                         bytes_per_rank, MPI_COMM_WORLD);
//
// The ranks of a node share its memory: the need is bytes_per_rank times the ranks on the node,
// against the node's available memory (MemAvailable). Collective over `comm`; every rank throws
// the same UserError when any node is short, so no rank goes on alone. Host memory: on a GPU
// build the device buffers live in device memory, which this check does not see.
#include <mpi.h>

#include <string>

namespace meshslice {

// Bytes of memory this node has available now (MemAvailable; 0 when unknown).
double available_memory_bytes();

void require_memory_fits(const std::string& what, double bytes_per_rank, MPI_Comm comm);

}  // namespace meshslice
