// ScaLAPACK p?gemm on meshslice shards against a serial GEMM of the same global matrices, for
// every dataflow, float and double. Every chip checks its own C block, so a BLACS grid that
// placed any chip at the wrong process (or a wrong transposition) fails on that chip. Each
// (dp, pp) group gets different data, so a grid spanning two groups would fail too.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "gemm/dataflow.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/scalapack_gemm.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

const Dataflow kFlows[] = {Dataflow::OS, Dataflow::LS, Dataflow::RS};
// M != N != K, all multiples of 12 so that every test mesh (axes of 1, 2, 3, 4) divides them;
// both orders, so that neither the largest nor the smallest dimension is always the same one.
const GemmProblem kShapes[] = {{Dataflow::OS, 24, 36, 48}, {Dataflow::OS, 48, 36, 24}};

int mesh_rows() { return torus().size(Axis::row); }
int mesh_cols() { return torus().size(Axis::col); }

// Global matrix `which` (0 = A, 1 = B) of this rank's (dp, pp) group.
GlobalMatrix group_matrix(int which, MatrixShape shape) {
  const std::uint64_t group = torus().coord(Axis::dp) * 131 + torus().coord(Axis::pp);
  return global_matrix(shape, group, which);
}

// This chip's block (row, col) of a global matrix.
template <class T>
Matrix<T> shard_of(const GlobalMatrix& g) {
  const std::size_t rows = g.shape.rows / mesh_rows(), cols = g.shape.cols / mesh_cols();
  const std::size_t r0 = torus().coord(Axis::row) * rows, c0 = torus().coord(Axis::col) * cols;
  return make_matrix<T>(rows, cols,
                        [&](std::size_t i, std::size_t j) { return g(r0 + i, c0 + j); });
}

// max |C - reference| over this chip's block, relative to max |reference| over the whole matrix;
// NaN (an element never written) counts as infinite error.
template <class T>
double max_rel_error(const Matrix<T>& c, const GlobalMatrix& want) {
  double scale = 0.0;
  for (double x : want.values) scale = std::max(scale, std::abs(x));
  auto host = to_host(c);
  const std::size_t r0 = torus().coord(Axis::row) * host.extent(0);
  const std::size_t c0 = torus().coord(Axis::col) * host.extent(1);
  double worst = 0.0;
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j) {
      const double diff = std::abs(static_cast<double>(host(i, j)) - want(r0 + i, c0 + j));
      worst = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(worst, diff);
    }
  return worst / scale;
}

template <class T>
constexpr double kTolerance = std::is_same_v<T, double> ? 1e-12 : 1e-5;

// Shards of one problem plus its serial answer; C starts as NaN so unwritten blocks show.
template <class T>
struct Case {
  explicit Case(const GemmProblem& problem)
      : p(problem),
        a_global(group_matrix(0, p.global_a())),
        b_global(group_matrix(1, p.global_b())),
        want(serial_gemm(p, a_global, b_global)),
        a(shard_of<T>(a_global)),
        b(shard_of<T>(b_global)),
        c(make_matrix<T>(p.M / mesh_rows(), p.N / mesh_cols(),
                         [](std::size_t, std::size_t) { return std::nan(""); })) {}
  GemmProblem p;
  GlobalMatrix a_global, b_global, want;
  Matrix<T> a, b, c;
};

template <class T>
class ScalapackGemm : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ScalapackGemm, Scalars);

TYPED_TEST(ScalapackGemm, EveryDataflowMatchesSerialOnEveryChip) {
  ASSERT_TRUE(scalapack_available());
  for (const GemmProblem& shape : kShapes)
    for (Dataflow flow : kFlows) {
      Case<TypeParam> t(GemmProblem{flow, shape.M, shape.N, shape.K});
      scalapack_gemm(torus(), flow, t.p.M, t.p.N, t.p.K, t.a, t.b, t.c);
      EXPECT_LE(max_rel_error(t.c, t.want), kTolerance<TypeParam>)
          << t.p.str() << " chip (" << torus().coord(Axis::row) << "," << torus().coord(Axis::col)
          << ")";
    }
}

// One grid serves many calls (how the benchmark keeps setup out of its timings), and building
// and dropping grids in a loop leaks neither BLACS contexts nor MPI communicators.
TYPED_TEST(ScalapackGemm, GridsAreReusableAndFreed) {
  {
    ScalapackGrid grid(torus());
    EXPECT_EQ(grid.row(), torus().coord(Axis::row));
    EXPECT_EQ(grid.col(), torus().coord(Axis::col));
    for (int repeat = 0; repeat < 2; ++repeat)
      for (Dataflow flow : kFlows) {
        Case<TypeParam> t(GemmProblem{flow, 24, 36, 48});
        scalapack_gemm(grid, flow, t.p.M, t.p.N, t.p.K, t.a, t.b, t.c);
        EXPECT_LE(max_rel_error(t.c, t.want), kTolerance<TypeParam>) << t.p.str();
      }
  }
  // OpenMPI and MPICH hand out the lowest free communicator index, so a leaked communicator
  // moves the index a fresh one gets.
  auto next_comm_index = [] {
    MPI_Comm probe = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &probe);
    const MPI_Fint index = MPI_Comm_c2f(probe);
    MPI_Comm_free(&probe);
    return index;
  };
  const MPI_Fint before = next_comm_index();
  Case<TypeParam> t(GemmProblem{Dataflow::LS, 24, 36, 48});
  int first_context = -1;
  for (int call = 0; call < 100; ++call) {
    ScalapackGrid grid(torus());
    if (call == 0) first_context = grid.context();
    EXPECT_EQ(grid.context(), first_context) << "BLACS context slot not reused at call " << call;
    scalapack_gemm(grid, t.p.flow, t.p.M, t.p.N, t.p.K, t.a, t.b, t.c);
    scalapack_gemm(torus(), t.p.flow, t.p.M, t.p.N, t.p.K, t.a, t.b, t.c);
  }
  EXPECT_EQ(next_comm_index(), before) << "communicators leaked over 100 grids";
  EXPECT_LE(max_rel_error(t.c, t.want), kTolerance<TypeParam>);
}

// Bad shapes are UserErrors raised before any communication, so every rank throws and none waits.
TEST(ScalapackGemmErrors, ShapesNotDivisibleByTheMeshNameTheSizes) {
  const int rows = mesh_rows(), cols = mesh_cols();
  if (rows * cols == 1) GTEST_SKIP() << "every shape divides a 1x1 mesh";
  // K = 49 splits over neither axis; it is A's columns (OS) and B's rows, whichever axis is > 1.
  Matrix<double> a("a", 24 / rows, 1), b("b", 1, 36 / cols), c("c", 24 / rows, 36 / cols);
  try {
    scalapack_gemm(torus(), Dataflow::OS, 24, 36, 49, a, b, c);
    ADD_FAILURE() << "K=49 on a " << rows << "x" << cols << " mesh was accepted";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("49"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(rows) + "x" + std::to_string(cols) + " mesh"),
              std::string::npos)
        << what;
  }
}

TEST(ScalapackGemmErrors, ShardsThatAreNotThisChipsBlockAndEmptyShapes) {
  const std::size_t rows = mesh_rows(), cols = mesh_cols();
  Matrix<double> a("a", 24 / rows, 48 / cols), b("b", 48 / rows, 36 / cols);
  Matrix<double> wrong_c("c", 24 / rows, 36 / cols + 1);  // one column too many on any mesh
  try {
    scalapack_gemm(torus(), Dataflow::OS, 24, 36, 48, a, b, wrong_c);
    ADD_FAILURE() << "a C shard of the wrong shape was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("shard must be"), std::string::npos) << e.what();
  }
  ScalapackGrid grid(torus());  // the grid form checks the same way
  EXPECT_THROW(scalapack_gemm(grid, Dataflow::LS, 24, 36, 48, a, b, wrong_c), UserError);
  EXPECT_THROW(scalapack_gemm(grid, Dataflow::OS, 0, 36, 48, a, b, wrong_c), UserError);
}

TEST(Dataflow, NamesRoundTripAndUnknownNamesAreUserErrors) {
  for (Dataflow flow : kFlows) EXPECT_EQ(parse_dataflow(dataflow_name(flow)), flow);
  EXPECT_EQ(parse_dataflow("ls"), Dataflow::LS);
  try {
    parse_dataflow("xs");
    ADD_FAILURE() << "'xs' parsed";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'xs'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("os"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace meshslice::testing
