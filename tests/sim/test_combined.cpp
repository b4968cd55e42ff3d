// Combined mode: the real executor's results are untouched by riding along with the emulator,
// and the emulated time of the ops that ran equals the data-free emulation of the same GEMM.
#include <gtest/gtest.h>

#include "exec/combined_executor.hpp"
#include "exec/real_executor.hpp"
#include "gemm/run_gemm.hpp"
#include "mpi_test_env.hpp"
#include "sim/emulate.hpp"

namespace meshslice::testing {
namespace {

// The combined executor offers the whole executor interface (exec/executor_interface.hpp).
static_assert(is_executor_v<sim::CombinedExecutor<RealExecutor<float>>>);
static_assert(is_executor_v<sim::CombinedExecutor<RealExecutor<double>>>);

const hw::MachineModel& tpuv4() {
  static const hw::MachineModel model(hw::load_machine(hw::machine_path("tpuv4-sim")));
  return model;
}

Matrix<double> shard(Algorithm algorithm, const GemmProblem& p, char matrix) {
  const ShardRegion r =
      shard_region(algorithm, p, matrix, torus().size(Axis::row), torus().size(Axis::col),
                   torus().coord(Axis::row), torus().coord(Axis::col));
  return make_matrix<double>(r.rows, r.cols, [&](std::size_t i, std::size_t j) {
    return global_value(matrix, r.row0 + i, r.col0 + j, 7);
  });
}

TEST(CombinedExecutor, RealResultsAndEmulatedTimesOfTheSameOps) {
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  for (Algorithm algorithm : {Algorithm::meshslice, Algorithm::collective, Algorithm::wang})
    for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
      // Divisible by every mesh side up to 4 times S * B = 8 where MeshSlice slices.
      const GemmProblem p{flow, 288, 96, 192};
      // Wang: classic, one shift step per iteration over the col ring.
      const GemmOptions o{algorithm == Algorithm::wang ? cols : 2, 4};
      const Matrix<double> a = shard(algorithm, p, 'A'), b = shard(algorithm, p, 'B');
      const Matrix<double> c_alone = shard(algorithm, p, 'C');
      const Matrix<double> c_combined("c_combined", c_alone.extent(0), c_alone.extent(1));
      {
        RealExecutor<double> alone(torus(), CommOptions{});
        run_gemm(alone, algorithm, p, a, b, c_alone, o);
        alone.wait_all();
      }
      RealExecutor<double> real(torus(), CommOptions{});
      sim::CombinedExecutor<RealExecutor<double>> ex(real, tpuv4());
      run_gemm(ex, algorithm, p, ex.wrap(a), ex.wrap(b), ex.wrap(c_combined), o);
      ex.wait_all();
      const auto x = to_host(c_alone), y = to_host(c_combined);
      for (std::size_t i = 0; i < x.extent(0); ++i)
        for (std::size_t j = 0; j < x.extent(1); ++j)
          ASSERT_EQ(x(i, j), y(i, j)) << algorithm_name(algorithm) << " " << dataflow_name(flow);
      // These algorithms are symmetric: every chip's emulated timeline is chip (0, 0)'s.
      const auto emulated = sim::emulate_gemm(tpuv4(), algorithm, p, rows, cols, o);
      EXPECT_DOUBLE_EQ(ex.emulated().totals().seconds, emulated.totals.seconds)
          << algorithm_name(algorithm) << " " << dataflow_name(flow);
      EXPECT_GT(ex.emulated().totals().seconds, 0.0);
    }
}

}  // namespace
}  // namespace meshslice::testing
