#pragma once
// A string from one rank to every rank of a communicator (a message, a file's text read once):
//     text = broadcast_text(comm, text, /*root=*/0);   // on every rank; root's text returned
#include <mpi.h>

#include <string>

namespace meshslice {

inline std::string broadcast_text(MPI_Comm comm, std::string text, int root = 0) {
  unsigned long long length = text.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
  text.resize(length);
  MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm);
  return text;
}

}  // namespace meshslice
