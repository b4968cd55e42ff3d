#include "mesh/mesh_parameters.hpp"

#include "core/deck.hpp"

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
  const int others = shape.dp * shape.pp * shape.rows;
  if (shape.cols == 0 && others > 0 && world_size % others == 0) shape.cols = world_size / others;
  return shape;
}

}  // namespace meshslice
