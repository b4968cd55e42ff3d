#include "core/mpi_io_workaround.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>

namespace meshslice {

void avoid_broken_mpi_io() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);  // allowed before MPI_Init
  if (std::string(version, static_cast<std::size_t>(length)).find("Open MPI") == std::string::npos)
    return;
  if (std::getenv("OMPI_MCA_fcoll") || std::getenv("OMPI_MCA_io")) return;  // the user's choice
  setenv("OMPI_MCA_fcoll", "^vulcan", 0);
}

}  // namespace meshslice
