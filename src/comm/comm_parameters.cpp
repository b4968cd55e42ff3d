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
  const FlightSettings flight;
  comm.set("flight_recorder", static_cast<int>(flight.capacity),
           "communication operations each rank remembers (kind, axis, bytes, peer, times) for "
           "the dump OUT/flight-rank-R.json that a timeout or an MPI error writes; 0 turns the "
           "recorder and the watchdog off");
  comm.set("timeout_seconds", flight.timeout_seconds,
           "a communication operation outstanding this long ends the job (exit 4) with its "
           "history on every stuck rank (read them with meshslice-flight-report OUT); 0 = never");
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

FlightSettings flight_settings_from(const Teuchos::ParameterList& deck, const std::string& out_dir,
                                    int rank) {
  FlightSettings settings;
  const int capacity = get_param<int>(deck, "comm.flight_recorder");
  require(capacity >= 0, "comm.flight_recorder = ", capacity,
          " must be 0 (off) or the number of operations to remember, e.g. 64");
  settings.capacity = static_cast<std::size_t>(capacity);
  settings.timeout_seconds = get_param<double>(deck, "comm.timeout_seconds");
  require(settings.timeout_seconds >= 0, "comm.timeout_seconds = ", settings.timeout_seconds,
          " must be 0 (no watchdog) or positive");
  settings.dump_dir = out_dir;
  settings.rank = rank;
  return settings;
}

}  // namespace meshslice
