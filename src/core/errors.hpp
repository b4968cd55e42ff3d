#pragma once
// Error types. The split matters for how an MPI program ends (see core/app.hpp):
//  * UserError: something the user asked for is wrong (deck key, shape, mesh size). Every rank
//    evaluates the same check on the same inputs, so every rank throws it; rank 0 prints it once
//    and all ranks exit non-zero without any rank waiting on another.
//  * anything else is an internal or rank-local failure: it is printed with the rank and the
//    job is aborted with MPI_Abort so that no peer hangs in a collective.
#include <sstream>
#include <stdexcept>
#include <string>

namespace meshslice {

class UserError : public std::runtime_error {
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
