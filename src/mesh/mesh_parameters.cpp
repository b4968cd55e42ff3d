#include "mesh/mesh_parameters.hpp"

#include <utility>

#include "core/deck.hpp"
#include "core/errors.hpp"

namespace meshslice {

void add_mesh_parameters(Teuchos::ParameterList& valid) {
  auto& mesh = valid.sublist("mesh", false,
                             "The device torus: ranks = dp * pp * rows * cols (row-major, col "
                             "fastest, so consecutive ranks share a row ring).");
  mesh.set("dp", 1, "data-parallel replicas");
  mesh.set("pp", 1, "pipeline stages");
  mesh.set("rows", 1, "mesh rows of the 2D tensor-parallel torus");
  mesh.set("cols", 0, "mesh columns; 0 = all remaining ranks (ranks / (dp * pp * rows))");
}

MeshShape mesh_shape_from(const Teuchos::ParameterList& deck, int world_size) {
  MeshShape shape;
  shape.dp = get_param<int>(deck, "mesh.dp");
  shape.pp = get_param<int>(deck, "mesh.pp");
  shape.rows = get_param<int>(deck, "mesh.rows");
  shape.cols = get_param<int>(deck, "mesh.cols");
  for (const auto& [key, value] : {std::pair<const char*, int>{"mesh.dp", shape.dp},
                                   {"mesh.pp", shape.pp},
                                   {"mesh.rows", shape.rows}})
    require(value >= 1, key, " = ", value, " must be at least 1");
  require(shape.cols >= 0, "mesh.cols = ", shape.cols,
          " must be at least 1 (or 0: all remaining ranks)");
  if (shape.cols != 0) return shape;  // the torus checks the product against the job's ranks
  const int others = shape.dp * shape.pp * shape.rows;
  require(world_size % others == 0,
          "mesh.cols = 0 takes the ranks left after mesh.dp * mesh.pp * "
          "mesh.rows = ",
          shape.dp, " * ", shape.pp, " * ", shape.rows, " = ", others, ", but the job's ",
          world_size, " MPI ranks are not a multiple of ", others, "; run a multiple of ", others,
          " ranks or change mesh.dp, mesh.pp or mesh.rows");
  shape.cols = world_size / others;
  return shape;
}

}  // namespace meshslice
