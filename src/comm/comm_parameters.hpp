#pragma once
// The `comm` section of the decks: how collectives run.
#include <Teuchos_ParameterList.hpp>

#include <string>

#include "comm/comm_options.hpp"
#include "core/flight_recorder.hpp"

namespace meshslice {

void add_comm_parameters(Teuchos::ParameterList& valid);
CommOptions comm_options_from(const Teuchos::ParameterList& deck);
// The flight recorder's settings from comm.flight_recorder and comm.timeout_seconds; this rank
// (of MPI_COMM_WORLD) writes its dump into out_dir.
FlightSettings flight_settings_from(const Teuchos::ParameterList& deck, const std::string& out_dir,
                                    int rank);

}  // namespace meshslice
