#pragma once
// The `comm` section of the decks: how collectives run.
#include <Teuchos_ParameterList.hpp>

#include "comm/comm_options.hpp"

namespace meshslice {

void add_comm_parameters(Teuchos::ParameterList& valid);
CommOptions comm_options_from(const Teuchos::ParameterList& deck);

}  // namespace meshslice
