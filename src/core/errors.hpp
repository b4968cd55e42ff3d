#pragma once
// Error types. The split matters for how an MPI program ends (see core/app.hpp):
//  * UserError: something the user asked for is wrong (deck key, shape, mesh size). Every rank
//    evaluates the same check on the same inputs, so every rank throws it; rank 0 prints it once
//    and all ranks exit non-zero without any rank waiting on another.
//  * RankLocalError: something only this rank can see went wrong (a file it cannot write, a
//    path on its file system). Its peers may already wait for it in a collective, so it is
//    printed with the rank as a user error and the job is ended with MPI_Abort: every rank exits
//    non-zero, none hangs.
//  * anything else is an internal failure: printed with the rank, then MPI_Abort as above.
#include <sstream>
#include <stdexcept>
#include <string>

namespace meshslice {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RankLocalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds a message from streamable parts: throw UserError(concat("S=", s, " must divide ", n)).
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Throws UserError with the concatenated message when `condition` is false.
template <class... Parts>
void require(bool condition, const Parts&... message) {
  if (!condition) throw UserError(concat(message...));
}

}  // namespace meshslice
