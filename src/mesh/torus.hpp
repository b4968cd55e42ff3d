#pragma once
// The device mesh: an MPI Cartesian, fully periodic communicator over four named axes
// (dp, pp, row, col), any of which may have size 1. Each axis is a ring; its sub-communicator
// ranks processes by their coordinate on that axis. The `row` ring joins the chips that differ
// only in their row coordinate (one mesh column: the paper's X_row collectives run on it); the
// `col` ring joins the chips of one mesh row (the paper's X_col). Collectives and GEMMs talk to
// an AxisComm, never to raw ranks.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace meshslice {

// dp, pp, row and col are the four Cartesian dimensions. tp is not a dimension but the ring of
// the whole row x col tensor-parallel group (rank = row * cols + col), which 1D tensor
// parallelism and FSDP run their collectives on.
enum class Axis { dp = 0, pp = 1, row = 2, col = 3, tp = 4 };
constexpr int kNumAxes = 4;   // Cartesian dimensions
constexpr int kNumRings = 5;  // the four axes' rings plus tp

const char* axis_name(Axis axis);
Axis parse_axis(const std::string& name);  // "dp", "pp", "row", "col", "tp"; UserError otherwise

struct MeshShape {
  int dp = 1;
  int pp = 1;
  int rows = 1;
  int cols = 1;
  int size(Axis axis) const;
  int total() const { return dp * pp * rows * cols; }
  std::string str() const;  // "dp1 x pp1 x 2x3"
};

// One ring of the torus: a sub-communicator plus the ring neighbours and a tag sequence.
// Every collective started on the ring draws a fresh tag, so several non-blocking ring
// collectives may be in flight on the same ring without their messages matching each other
// (all ranks of a ring start collectives in the same order, so the tags agree).
class AxisComm {
 public:
  AxisComm(MPI_Comm comm, std::string name);
  ~AxisComm();
  AxisComm(const AxisComm&) = delete;
  AxisComm& operator=(const AxisComm&) = delete;

  MPI_Comm comm() const { return comm_; }
  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int next() const { return (rank_ + 1) % size_; }
  int prev() const { return (rank_ + size_ - 1) % size_; }
  int neighbour(int displacement) const;  // rank + displacement on the ring, any sign
  int next_tag() const;
  // The ring's members as ranks of MPI_COMM_WORLD, in ring order, and the lowest of them (which,
  // with the axis name, names the ring in the flight recorder's dumps).
  const std::vector<int>& world_ranks() const { return world_ranks_; }
  int world_rank_of(int ring_rank) const { return world_ranks_[ring_rank]; }
  int group_first() const { return group_first_; }
  // The number of the next collective started on this ring, from 1: it agrees across the ring's
  // ranks (they start collectives in the same order), which lets the flight recorder's report
  // line their histories up.
  std::uint64_t next_op() const { return ++op_sequence_; }
  // The tag of point-to-point messages (pipeline-stage sends), outside the collectives' tag
  // window: ranks that only exchange with one neighbour draw no common tag sequence, and MPI
  // keeps messages between two ranks with one tag in order.
  static constexpr int kPointToPointTag = 1 << 14;
  // Channels of point-to-point messages: tags kPointToPointTag + channel stay within the 32767
  // every MPI allows.
  static constexpr int kPointToPointChannels = 1 << 14;

 private:
  MPI_Comm comm_;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
  mutable int tag_sequence_ = 0;
  mutable std::uint64_t op_sequence_ = 0;
  std::vector<int> world_ranks_;
  int group_first_ = 0;
};

class Torus {
 public:
  // Collective over `world`. A shape whose product differs from the number of ranks is a
  // UserError raised identically on every rank.
  Torus(MPI_Comm world, const MeshShape& shape);
  ~Torus();
  Torus(const Torus&) = delete;
  Torus& operator=(const Torus&) = delete;

  const MeshShape& shape() const { return shape_; }
  MPI_Comm comm() const { return cart_; }
  int rank() const { return rank_; }
  int coord(Axis axis) const { return axes_[static_cast<int>(axis)]->rank(); }
  int size(Axis axis) const { return shape_.size(axis); }

  // The ring along one axis (its processes differ only in that coordinate).
  const AxisComm& axis(Axis axis) const { return *axes_[static_cast<int>(axis)]; }
  // Ranks of the ring neighbours along `axis` in the torus communicator.
  int neighbour_rank(Axis axis, int displacement) const;

  // Sub-communicator spanning the given axes (e.g. {row, col} = one tensor-parallel group).
  // The caller owns the result and frees it with MPI_Comm_free.
  MPI_Comm sub_comm(const std::vector<Axis>& axes) const;

 private:
  MeshShape shape_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::array<int, kNumAxes> coords_{};
  std::array<std::unique_ptr<AxisComm>, kNumRings> axes_;
};

}  // namespace meshslice
