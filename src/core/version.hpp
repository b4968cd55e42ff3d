#pragma once
// What this build of meshslice is made of: its version and git revision, the Kokkos and
// KokkosKernels it was compiled against (versions, enabled backends, math libraries), Teuchos and
// the MPI library it runs with. For `--version` (every app, through run_app), for the log of a
// batch job and for the result files a run writes (OUT/version.json, summaries), so that a
// result can always be traced to the build that made it.
// Nothing here needs MPI_Init or Kokkos::initialize: --version answers before either runs.
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"

namespace meshslice {

// (key, value) pairs in print order: "meshslice", "git_revision", "build", "host_vectors",
// "kokkos", "kokkos_backends", "kokkoskernels", "kokkoskernels_tpls", "teuchos", "mpi",
// "mpi_library".
std::vector<std::pair<std::string, std::string>> version_info();

// One "key: value" line per entry, as `meshslice-X --version` prints it.
std::string version_text();

// One line for logs and file headers:
// "meshslice 0.1.0 (rev 0aca690d12ab), Kokkos 4.7.04 [OpenMP Serial (default OpenMP)],
//  KokkosKernels 4.7.04 [BLAS], Teuchos (Trilinos 16.2.1), MPI 3.1 (Open MPI v5.0.10, ...)"
std::string version_line();

// The entries as one JSON object, {"meshslice": "0.1.0", "git_revision": "...", ...}, to embed
// in a JSON result file: summary.set("build", version_json()).
json::Value version_json();

}  // namespace meshslice
