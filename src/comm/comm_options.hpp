#pragma once
// Options shared by every collective.
#include <cstddef>
#include <string>

namespace meshslice {

// MPI-native collectives (MPI_Iallgather & co.) or the explicit ring a torus runs: P-1 steps of
// neighbour Isend/Irecv, the algorithm the hardware model times. Native is the default because
// on the machines measured so far it is at least as fast (see meshslice-bench collectives);
// the ring is what a caller wants when it must drive progress step by step.
enum class CollectiveImpl { native, ring };

const char* impl_name(CollectiveImpl impl);
CollectiveImpl parse_impl(const std::string& name);  // "native" | "ring"; UserError otherwise

// Which matrix dimension a gather concatenates / a scatter splits. Shards are row-major, so a
// gather along rows stacks contiguous blocks and needs no repacking; along columns it does.
enum class MatrixDim { rows, cols };

const char* dim_name(MatrixDim dim);
MatrixDim parse_dim(const std::string& name);  // "rows" | "cols"

// The default of CommOptions::stage_through_host: true when the environment variable
// MESHSLICE_STAGE_THROUGH_HOST is 1 (read once), so that a whole test suite, whose tests build
// their own CommOptions, runs staged without a change to any of them.
bool stage_through_host_by_default();

struct CommOptions {
  CollectiveImpl impl = CollectiveImpl::native;
  // When false and the data lives in memory the host cannot touch (CUDA/HIP without a
  // GPU-aware MPI), buffers are staged through host mirrors. Host memory is not staged...
  bool gpu_aware_mpi = false;
  // ...unless this test aid is on: every collective then stages through host mirrors as it does
  // on a GPU without a GPU-aware MPI (copies to and from the mirrors, sums on the host, the
  // scratch reserved for them), so that the GPU's code paths run, and are tested, on a CPU.
  // It only costs time on a CPU. Deck key comm.stage_through_host.
  bool stage_through_host = stage_through_host_by_default();
  // Packet size of the ring's pipelined messages: the broadcast/reduce packets (paper Fig. 3: D
  // packets over P+D-1 stages; smaller packets shorten the pipeline fill, larger ones cut
  // per-message overhead), and the pieces the ring reduce-scatter sums as they arrive, which
  // should fit in cache (comm/ring_schedules.hpp).
  std::size_t packet_bytes = std::size_t(1) << 20;
};

}  // namespace meshslice
