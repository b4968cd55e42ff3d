// The torus: coordinates, ring sub-communicators ordered by coordinate, neighbours, and
// multi-axis sub-communicators, checked against the row-major rank formula.
#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

TEST(Torus, RankIsRowMajorOverDpPpRowCol) {
  const auto& t = torus();
  const auto& s = t.shape();
  const int expected =
      ((t.coord(Axis::dp) * s.pp + t.coord(Axis::pp)) * s.rows + t.coord(Axis::row)) * s.cols +
      t.coord(Axis::col);
  EXPECT_EQ(t.rank(), expected);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  EXPECT_EQ(t.rank(), world_rank);  // no reordering: rank placement stays the launcher's
}

TEST(Torus, EachRingListsItsMembersInCoordinateOrder) {
  const auto& t = torus();
  for (Axis axis : {Axis::dp, Axis::pp, Axis::row, Axis::col}) {
    const auto& ring = t.axis(axis);
    ASSERT_EQ(ring.size(), t.size(axis)) << axis_name(axis);
    EXPECT_EQ(ring.rank(), t.coord(axis));
    // Every member reports its coordinate; gathered in ring order they must count 0..P-1, and
    // all other coordinates must equal ours.
    std::vector<int> mine(4), all(4 * ring.size());
    for (int a = 0; a < 4; ++a) mine[a] = t.coord(static_cast<Axis>(a));
    MPI_Allgather(mine.data(), 4, MPI_INT, all.data(), 4, MPI_INT, ring.comm());
    for (int p = 0; p < ring.size(); ++p)
      for (int a = 0; a < 4; ++a)
        EXPECT_EQ(all[4 * p + a], a == static_cast<int>(axis) ? p : mine[a])
            << "ring " << axis_name(axis) << " member " << p << " axis " << a;
  }
}

TEST(Torus, TensorParallelRingSpansRowsAndColsRowMajor) {
  const auto& t = torus();
  const auto& ring = t.axis(Axis::tp);
  EXPECT_EQ(ring.size(), t.size(Axis::row) * t.size(Axis::col));
  EXPECT_EQ(ring.rank(), t.coord(Axis::row) * t.size(Axis::col) + t.coord(Axis::col));
  int dp_pp[2] = {t.coord(Axis::dp), t.coord(Axis::pp)};
  std::vector<int> all(2 * ring.size());
  MPI_Allgather(dp_pp, 2, MPI_INT, all.data(), 2, MPI_INT, ring.comm());
  for (int p = 0; p < ring.size(); ++p) {
    EXPECT_EQ(all[2 * p], dp_pp[0]);  // one ring per (dp, pp) group
    EXPECT_EQ(all[2 * p + 1], dp_pp[1]);
  }
}

TEST(Torus, NeighboursWrapAround) {
  const auto& t = torus();
  for (Axis axis : {Axis::row, Axis::col}) {
    const auto& ring = t.axis(axis);
    const int p = ring.size();
    EXPECT_EQ(ring.next(), (ring.rank() + 1) % p);
    EXPECT_EQ(ring.prev(), (ring.rank() + p - 1) % p);
    EXPECT_EQ(ring.neighbour(-3 * p - 1), ring.prev());
    // The torus rank of the next chip along the axis holds coordinate +1 (mod P).
    int coords[4];
    MPI_Cart_coords(t.comm(), t.neighbour_rank(axis, 1), 4, coords);
    EXPECT_EQ(coords[static_cast<int>(axis)], ring.next());
  }
}

TEST(Torus, SubCommunicatorOfSeveralAxes) {
  const auto& t = torus();
  MPI_Comm tp = t.sub_comm({Axis::row, Axis::col});
  int size = 0;
  int rank = 0;
  MPI_Comm_size(tp, &size);
  MPI_Comm_rank(tp, &rank);
  EXPECT_EQ(size, t.size(Axis::row) * t.size(Axis::col));
  EXPECT_EQ(rank, t.coord(Axis::row) * t.size(Axis::col) + t.coord(Axis::col));
  MPI_Comm_free(&tp);
}

TEST(Torus, WrongSizeIsAUserErrorOnEveryRank) {
  MeshShape too_big = torus().shape();
  too_big.rows += 1;
  try {
    Torus wrong(MPI_COMM_WORLD, too_big);
    ADD_FAILURE() << "a mesh larger than the job was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("MPI ranks"), std::string::npos) << e.what();
  }
  MeshShape zero = torus().shape();
  zero.cols = 0;
  EXPECT_THROW(Torus(MPI_COMM_WORLD, zero), UserError);
}

}  // namespace
}  // namespace meshslice::testing
