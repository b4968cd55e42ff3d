// The re-layout of the training driver: the distributed transpose of a matrix in Pr x Pc blocks,
// against the transpose of the same global matrix, both ways, on every mesh shape.
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/block_transpose.hpp"
#include "comm/comm_scratch.hpp"
#include "core/errors.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

// Both ways MPI can exchange the buffers: in place, and through host mirrors (a GPU without
// GPU-aware MPI; the stage_through_host test aid on a CPU).
class BlockTransposeBothWays : public ::testing::TestWithParam<bool> {};

TEST_P(BlockTransposeBothWays, MatchesTheSerialTranspose) {
  const bool staged = GetParam();
  CommOptions in_place;  // what the deck's defaults (no GPU-aware MPI) allow without staging
  in_place.stage_through_host = false;
  if (!staged && mpi_staged<MemSpace>(in_place))
    GTEST_SKIP() << "MPI cannot read device memory here (comm.gpu_aware_mpi off): only the "
                    "staged exchange applies";
  const int pr = torus().size(Axis::row), pc = torus().size(Axis::col);
  const std::size_t rows = 12, cols = 24;  // divisible by every mesh extent the tests use
  const GlobalMatrix x = global_matrix({rows, cols}, 7);
  BlockTranspose<double> forward(torus(), rows, cols, staged);
  BlockTranspose<double> back(torus(), cols, rows, staged);
  const Matrix<double> x_shard = block(x);
  Matrix<double> xt("xt", cols / pr, rows / pc), again("again", rows / pr, cols / pc);
  forward.run(ExecSpace(), x_shard, xt);
  EXPECT_EQ(worst_error(xt, transpose(x)), 0.0);
  back.run(ExecSpace(), xt, again);
  EXPECT_EQ(worst_error(again, x), 0.0);
  // What crosses the links: at most a chip's block each (a diagonal chip of a square mesh keeps
  // its block), something in all when there is more than one chip.
  EXPECT_LE(forward.elements_sent(), x_shard.size());
  unsigned long sent = forward.elements_sent(), total = 0;
  MPI_Allreduce(&sent, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, torus().axis(Axis::tp).comm());
  EXPECT_EQ(total > 0, pr * pc > 1);
  // Staged, the plan also holds the host mirrors of both exchange buffers.
  const std::size_t exchanged = (x_shard.size() + xt.size()) * sizeof(double);
  EXPECT_EQ(forward.bytes(), staged ? 2 * exchanged : exchanged);
}

INSTANTIATE_TEST_SUITE_P(InPlaceAndStaged, BlockTransposeBothWays, ::testing::Bool());

TEST(BlockTranspose, SizesTheMeshCannotSplitAreAClearError) {
  const int pr = torus().size(Axis::row), pc = torus().size(Axis::col);
  if (pr == 1 && pc == 1) GTEST_SKIP() << "every size splits over one chip";
  EXPECT_THROW(BlockTranspose<double>(torus(), 12 * pr * pc + 1, 12, false), UserError);
}

}  // namespace
}  // namespace meshslice::testing
