// meshslice-bench: measures the building blocks on the real machine (collectives; GEMMs later)
// and writes tables and CSV files under --out.
#include "bench_modes.hpp"
#include "comm/comm_parameters.hpp"
#include "core/deck.hpp"
#include "mesh/mesh_parameters.hpp"

namespace {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-bench");
  meshslice::set_choice(valid, "mode", "gemm", {"gemm", "collectives", "local_gemm"},
                        "what to measure: gemm = distributed GEMM algorithms side by side; "
                        "collectives = every collective vs message size; local_gemm = one "
                        "rank's GEMM in float and in bf16 by each route");
  meshslice::add_mesh_parameters(valid);
  meshslice::add_comm_parameters(valid);
  meshslice::bench::add_collectives_parameters(valid);
  meshslice::bench::add_gemm_parameters(valid);
  meshslice::bench::add_local_gemm_parameters(valid);
  return valid;
}

}  // namespace

int main(int argc, char** argv) {
  meshslice::AppSpec spec{
      "meshslice-bench",
      "Benchmarks the building blocks on the real machine. mode gemm: distributed GEMM "
      "algorithms (MeshSlice, baselines, ScaLAPACK) side by side, verified, traced; writes "
      "OUT/gemm.csv and OUT/trace-*.json. mode collectives: every collective vs message size, "
      "MPI-native vs ring; writes OUT/collectives.csv. mode local_gemm: one rank's GEMM in float "
      "and in bf16 by each route this build has; writes OUT/local_gemm.csv. All write "
      "OUT/deck.yaml.",
      "bench/gemm.yaml",
      valid_parameters,
      {},
      {}};
  return meshslice::run_app(argc, argv, spec, [](meshslice::AppContext& context) {
    const std::string mode = meshslice::get_param<std::string>(context.deck, "mode");
    meshslice::FlightRecorder::instance().start(
        meshslice::flight_settings_from(context.deck, context.out_dir, context.rank));
    if (mode == "local_gemm") return meshslice::bench::run_local_gemm_bench(context);
    return mode == "gemm" ? meshslice::bench::run_gemm_bench(context)
                          : meshslice::bench::run_collectives(context);
  });
}
