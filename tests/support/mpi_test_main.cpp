// main() for the MPI GoogleTest binaries: initializes MPI and Kokkos, builds the torus named on
// the command line (--mesh DP,PP,ROWS,COLS; default 1,1,1,N), prints the full report on rank 0
// and only failures (tagged with the rank) elsewhere, and exits non-zero on every rank if any
// rank failed, so ctest sees a failure wherever it happened.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/blas_kernels.hpp"
#include "core/mpi_io_workaround.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {

namespace {
std::unique_ptr<Torus> g_torus;

MeshShape parse_mesh(const char* text) {
  MeshShape shape;
  if (std::sscanf(text, "%d,%d,%d,%d", &shape.dp, &shape.pp, &shape.rows, &shape.cols) != 4) {
    std::fprintf(stderr, "--mesh wants DP,PP,ROWS,COLS, got '%s'\n", text);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return shape;
}

// Prints failed assertions of a non-root rank, prefixed with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};
}  // namespace

const Torus& torus() { return *g_torus; }

}  // namespace meshslice::testing

int main(int argc, char** argv) {
  meshslice::avoid_broken_mpi_io();  // as the apps do
  meshslice::avoid_fallback_blas_kernels();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ::testing::InitGoogleTest(&argc, argv);
  meshslice::MeshShape shape;
  shape.cols = size;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mesh") == 0 && i + 1 < argc)
      shape = meshslice::testing::parse_mesh(argv[++i]);
  }
  int failed = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    meshslice::testing::g_torus = std::make_unique<meshslice::Torus>(MPI_COMM_WORLD, shape);
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) {
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new meshslice::testing::FailurePrinter(rank));
    }
    if (rank == 0) std::printf("mesh %s on %d ranks\n", shape.str().c_str(), size);
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    meshslice::testing::g_torus.reset();
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !failed) std::printf("FAILED on another rank (see [rank N])\n");
  MPI_Finalize();
  return any_failed;
}
