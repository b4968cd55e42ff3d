#pragma once
// The `mesh` section every app's deck shares.
#include <Teuchos_ParameterList.hpp>

#include "mesh/torus.hpp"

namespace meshslice {

// Adds sublist `mesh` (dp, pp, rows, cols) with its documentation. `cols` defaults to 0,
// meaning "all ranks not used by the other axes", so a deck runs at any rank count.
void add_mesh_parameters(Teuchos::ParameterList& valid);

// The shape the deck asks for on `world_size` ranks; cols = 0 is resolved here. A shape that
// cannot fit is left for Torus to reject with the full message.
MeshShape mesh_shape_from(const Teuchos::ParameterList& deck, int world_size);

}  // namespace meshslice
