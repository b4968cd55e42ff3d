#include "core/log.hpp"

#include <mpi.h>

#include <iostream>

namespace meshslice {

namespace {
std::string& log_prefix() {
  static std::string prefix = "meshslice";
  return prefix;
}

int world_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
}  // namespace

void set_log_prefix(const std::string& app_name) { log_prefix() = app_name; }

void log_line(const std::string& message) {
  if (world_rank() != 0) return;
  std::cout << log_prefix() << ": " << message << std::endl;
}

}  // namespace meshslice
