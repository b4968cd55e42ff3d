// meshslice-bench: measures the building blocks on the real machine (collectives; GEMMs later)
// and writes tables and CSV files under --out.
#include "bench_modes.hpp"
#include "comm/comm_parameters.hpp"
#include "core/deck.hpp"
#include "mesh/mesh_parameters.hpp"

namespace {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-bench");
  meshslice::set_choice(valid, "mode", "collectives", {"collectives"},
                        "what to measure: collectives = every collective vs message size");
  meshslice::add_mesh_parameters(valid);
  meshslice::add_comm_parameters(valid);
  meshslice::bench::add_collectives_parameters(valid);
  return valid;
}

}  // namespace

int main(int argc, char** argv) {
  meshslice::AppSpec spec{
      "meshslice-bench",
      "Benchmarks collectives (MPI-native vs ring) on one axis of the torus. Prints a table and "
      "writes OUT/collectives.csv and OUT/deck.yaml.",
      "bench/collectives.yaml", valid_parameters};
  return meshslice::run_app(argc, argv, spec, [](meshslice::AppContext& context) {
    return meshslice::bench::run_collectives(context);
  });
}
