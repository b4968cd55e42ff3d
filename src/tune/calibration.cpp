#include "tune/calibration.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>

#include "comm/collective_timing.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "gemm/local_gemm_rate.hpp"
#include "mesh/torus.hpp"

namespace meshslice::tune {

namespace {

using Scalar = float;  // what meshslice-train runs by default

int node_ranks() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

double node_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// The largest shard every rank of a p-ring can hold its buffers for (the shard, the gathered
// stack of p, the other buffer and the scratch), in a quarter of what the node has free.
std::size_t memory_bound(int p, int ranks_on_node) {
  const double free = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return static_cast<std::size_t>(free / 4 / ranks_on_node / (p + 4));
}

double slowest(double seconds) {
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

const std::array<CalibratedKind, 3>& calibrated_kinds() {
  static const std::array<CalibratedKind, 3> kinds = {
      {{hw::CommKind::all_gather, "all_gather"},
       {hw::CommKind::reduce_scatter, "reduce_scatter"},
       {hw::CommKind::send_recv, "shift"}}};
  return kinds;
}

Calibration calibrate(const CalibrationOptions& o) {
  Calibration c;
  MPI_Comm_size(MPI_COMM_WORLD, &c.ranks);
  require(c.ranks >= 2, "calibration times communication between ranks: run it on at least 2 "
                        "(mpiexec -np 2 meshslice-tune --set mode=calibrate)");
  const int local = node_ranks();
  c.memory_bytes = node_memory_bytes() / local;
  for (int p = 2; p <= c.ranks; ++p)
    if (c.ranks % p == 0) c.axis_sizes.push_back(p);
  for (int p : c.axis_sizes) {
    // Every rank agrees on the sizes: the smallest bound of any rank.
    unsigned long bound = std::min(o.max_bytes, memory_bound(p, local));
    MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
    c.max_bytes = std::max<std::size_t>(c.max_bytes, bound);
    const Torus torus(MPI_COMM_WORLD, MeshShape{1, 1, c.ranks / p, p});  // rings of p: its cols
    log_info("calibration: rings of ", p, " ranks, shards of ", o.min_bytes >> 10, " KiB to ",
             bound >> 10, " KiB");
    for (std::size_t bytes = o.min_bytes; bytes <= bound; bytes *= 2) {
      // Named variables, not a structured binding: the lambda below captures them (C++20 only).
      const std::pair<std::size_t, std::size_t> shape = shard_shape(bytes, sizeof(Scalar));
      const std::size_t rows = shape.first, cols = shape.second;
      const double sent = static_cast<double>(rows * cols * sizeof(Scalar));
      const auto time = [&](const std::string& op, int displacement) {
        return time_collective<Scalar>(op, torus, Axis::col, rows, cols, MatrixDim::rows, o.comm,
                                       o.warmups, o.repetitions, displacement)
            .median;
      };
      for (const char* op : {"all_gather", "reduce_scatter", "broadcast"})
        c.comm.push_back({op, p, 1, sent, time(op, 1)});
      for (int d = 1; d <= p / 2; d *= 2) c.comm.push_back({"shift", p, d, sent, time("shift", d)});
    }
  }
  const ExecSpace space;
  for (const auto& [m, n, k] : o.gemm_shapes) {
    const double seconds = 2.0 * m * n * k / local_gemm_rate<Scalar>(space, m, n, k, o.repetitions);
    c.gemm.push_back({m, n, k, slowest(seconds)});
  }
  const std::size_t copy = std::min<std::size_t>(o.max_bytes, 64 << 20) / sizeof(Scalar);
  c.copy_bytes_per_second =
      copy * sizeof(Scalar) / time_memcpy<Scalar>(copy, o.warmups, o.repetitions).median;
  log_info("calibration: ", c.comm.size(), " collective and ", c.gemm.size(), " GEMM timings");
  return c;
}

hw::Machine calibrated_machine(const Calibration& c, const std::string& name) {
  hw::Machine m;
  m.name = name;
  m.source = "calibration";
  m.chip = fit_chip(c.gemm, c.copy_bytes_per_second, c.memory_bytes, sizeof(Scalar));
  const auto samples = [&c](const std::string& op) {
    std::vector<CommSample> out;
    for (const CommSample& s : c.comm)
      if (s.op == op) out.push_back(s);
    return out;
  };
  for (const auto& [kind, op] : calibrated_kinds()) {
    const hw::LinkParams link = fit_link(samples(op));
    for (auto& set : m.ici.kinds[static_cast<int>(kind)]) set = link;
  }
  m.ici.ring_directions = 1;
  m.ici.ring1d_like_dim = 1;
  m.ici.nic_hbm_contention = false;
  return m;
}

}  // namespace meshslice::tune
