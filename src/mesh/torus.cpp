#include "mesh/torus.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/flight_recorder.hpp"

namespace meshslice {

namespace {
constexpr const char* kAxisNames[kNumRings] = {"dp", "pp", "row", "col", "tp"};

// Tags 0..kTagWindow-1 are reserved for ring collectives; sequences wrap around. Far more
// collectives than this are never in flight on one ring at once.
constexpr int kTagWindow = AxisComm::kPointToPointTag;
}  // namespace

const char* axis_name(Axis axis) { return kAxisNames[static_cast<int>(axis)]; }

Axis parse_axis(const std::string& name) {
  for (int a = 0; a < kNumRings; ++a)
    if (name == kAxisNames[a]) return static_cast<Axis>(a);
  throw UserError(concat("unknown mesh axis '", name, "'; valid axes: dp, pp, row, col, tp"));
}

int MeshShape::size(Axis axis) const {
  switch (axis) {
    case Axis::dp: return dp;
    case Axis::pp: return pp;
    case Axis::row: return rows;
    case Axis::col: return cols;
    case Axis::tp: return rows * cols;
  }
  return 1;
}

std::string MeshShape::str() const { return concat("dp", dp, " x pp", pp, " x ", rows, "x", cols); }

AxisComm::AxisComm(MPI_Comm comm, std::string name) : comm_(comm), name_(std::move(name)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Group group, world;
  MPI_Comm_group(comm_, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ring_ranks(size_);
  for (int r = 0; r < size_; ++r) ring_ranks[r] = r;
  world_ranks_.resize(size_);
  MPI_Group_translate_ranks(group, size_, ring_ranks.data(), world, world_ranks_.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  group_first_ = *std::min_element(world_ranks_.begin(), world_ranks_.end());
  FlightRecorder::instance().note_group(name_, world_ranks_);
}

AxisComm::~AxisComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int AxisComm::neighbour(int displacement) const {
  return ((rank_ + displacement) % size_ + size_) % size_;
}

int AxisComm::next_tag() const { return tag_sequence_++ % kTagWindow; }

Torus::Torus(MPI_Comm world, const MeshShape& shape) : shape_(shape) {
  int world_size = 0;
  MPI_Comm_size(world, &world_size);
  for (int a = 0; a < kNumAxes; ++a)
    require(shape.size(static_cast<Axis>(a)) >= 1, "mesh axis '", kAxisNames[a], "' has size ",
            shape.size(static_cast<Axis>(a)), "; every axis needs size >= 1");
  require(shape.total() == world_size, "mesh ", shape.str(), " has ", shape.total(),
          " devices but the job has ", world_size,
          " MPI ranks; set mesh.dp * mesh.pp * mesh.rows * mesh.cols = ", world_size,
          " or run with mpiexec -np ", shape.total());

  // Axis order dp, pp, row, col: col varies fastest, so the ranks of one row are consecutive
  // (one node's cores/GPUs end up in the same row ring under a block rank mapping).
  int dims[kNumAxes] = {shape.dp, shape.pp, shape.rows, shape.cols};
  int periods[kNumAxes] = {1, 1, 1, 1};
  MPI_Cart_create(world, kNumAxes, dims, periods, /*reorder=*/0, &cart_);
  MPI_Comm_rank(cart_, &rank_);
  MPI_Cart_coords(cart_, rank_, kNumAxes, coords_.data());

  for (int a = 0; a < kNumAxes; ++a) {
    int keep[kNumAxes] = {0, 0, 0, 0};
    keep[a] = 1;
    MPI_Comm ring = MPI_COMM_NULL;
    MPI_Cart_sub(cart_, keep, &ring);
    axes_[a] = std::make_unique<AxisComm>(ring, kAxisNames[a]);
    if (axes_[a]->rank() != coords_[a])
      throw std::logic_error("MPI_Cart_sub ranked a ring out of coordinate order");
  }
  const int tp = static_cast<int>(Axis::tp);
  axes_[tp] = std::make_unique<AxisComm>(sub_comm({Axis::row, Axis::col}), kAxisNames[tp]);
  if (axes_[tp]->rank() != coords_[2] * shape.cols + coords_[3])
    throw std::logic_error("the tensor-parallel ring is not ordered row-major");
}

Torus::~Torus() {
  for (auto& axis : axes_) axis.reset();
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

int Torus::neighbour_rank(Axis axis, int displacement) const {
  int source = 0;
  int dest = 0;
  MPI_Cart_shift(cart_, static_cast<int>(axis), displacement, &source, &dest);
  return dest;
}

MPI_Comm Torus::sub_comm(const std::vector<Axis>& axes) const {
  int keep[kNumAxes] = {0, 0, 0, 0};
  for (Axis axis : axes) {
    if (axis == Axis::tp) {
      keep[static_cast<int>(Axis::row)] = keep[static_cast<int>(Axis::col)] = 1;
    } else {
      keep[static_cast<int>(axis)] = 1;
    }
  }
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Cart_sub(cart_, keep, &sub);
  return sub;
}

}  // namespace meshslice
