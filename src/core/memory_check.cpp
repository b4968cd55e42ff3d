#include "core/memory_check.hpp"

#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace meshslice {

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024.0;
  }
  return 0;
}

void require_memory_fits(const std::string& what, double bytes_per_rank, MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const double available = available_memory_bytes();
  // The worst node decides, and every rank learns its figures.
  double mine[3] = {available > 0 ? bytes_per_rank * node_ranks / available : 0.0,
                    static_cast<double>(node_ranks), available};
  struct {
    double ratio;
    int rank;
  } local{mine[0], 0}, worst{0, 0};
  MPI_Comm_rank(comm, &local.rank);
  MPI_Allreduce(&local, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  MPI_Bcast(mine, 3, MPI_DOUBLE, worst.rank, comm);
  if (worst.ratio <= 1.0) return;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  throw UserError(concat(what, " need ", bytes_per_rank / gib, " GiB per rank, ", mine[1],
                         " ranks on a node: ", bytes_per_rank * mine[1] / gib,
                         " GiB, but the "
                         "node has ",
                         mine[2] / gib,
                         " GiB available; choose smaller sizes, "
                         "fewer ranks per node or more nodes"));
}

}  // namespace meshslice
