#include "comm/comm_parameters.hpp"

#include "core/deck.hpp"

namespace meshslice {

void add_comm_parameters(Teuchos::ParameterList& valid) {
  const CommOptions defaults;
  auto& comm = valid.sublist("comm", false, "How collectives run.");
  set_choice(comm, "implementation", impl_name(defaults.impl), {"native", "ring"},
             "native: MPI_Iallgather & co.; ring: explicit P-1 step neighbour ring (what a torus "
             "runs; progresses step by step)");
  comm.set("gpu_aware_mpi", defaults.gpu_aware_mpi,
           "pass device pointers to MPI; false stages GPU buffers through host memory");
  comm.set("stage_through_host", defaults.stage_through_host,
           "test aid: stage every collective through host mirrors even where MPI could read the "
           "data in place, as on a GPU without GPU-aware MPI, so the GPU's code paths run on a "
           "CPU (slower; the default is true when MESHSLICE_STAGE_THROUGH_HOST=1)");
  comm.set("packet_bytes", static_cast<int>(defaults.packet_bytes),
           "packet size of the ring's pipelined messages: broadcast/reduce packets, and the "
           "pieces the ring reduce-scatter sums as they arrive (keep them cache-sized)");
}

CommOptions comm_options_from(const Teuchos::ParameterList& deck) {
  CommOptions options;
  options.impl = parse_impl(get_param<std::string>(deck, "comm.implementation"));
  options.gpu_aware_mpi = get_param<bool>(deck, "comm.gpu_aware_mpi");
  options.stage_through_host = get_param<bool>(deck, "comm.stage_through_host");
  const int packet_bytes = get_param<int>(deck, "comm.packet_bytes");
  require(packet_bytes > 0, "comm.packet_bytes must be positive, got ", packet_bytes);
  options.packet_bytes = static_cast<std::size_t>(packet_bytes);
  return options;
}

}  // namespace meshslice
