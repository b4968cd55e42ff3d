#pragma once
// Error types. The split matters for how an MPI program ends (see core/app.hpp):
//  * UserError: something the user asked for is wrong (deck key, shape, mesh size). Every rank
//    evaluates the same check on the same inputs, so every rank throws it; rank 0 prints it once
//    and all ranks exit non-zero without any rank waiting on another.
//  * RankLocalError: something only this rank can see went wrong (a file it cannot write, a
//    path on its file system). Its peers may already wait for it in a collective, so it is
//    printed with the rank as a user error and the job is ended with MPI_Abort: every rank exits
//    non-zero, none hangs.
//  * InternalError (MESHSLICE_ASSERT): a broken invariant, which only a bug can cause -- in
//    meshslice, or in a program calling its library out of order -- never a deck, a file or the
//    data. Like anything else unexpected it is printed as an internal error with the rank and
//    the source line, and MPI_Abort ends the job with status 3 (app.hpp), never 2.
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

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
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

// Throws InternalError naming the source line (from src/ on) and asking for a report.
[[noreturn]] inline void fail_invariant(const char* file, int line, const std::string& message) {
  const std::string path = file;
  const std::size_t src = path.rfind("src/");
  throw InternalError(concat(src == std::string::npos ? path : path.substr(src), ":", line, ": ",
                             message, " (a bug: please report it with the command and the deck)"));
}

}  // namespace meshslice

// Checks an invariant that only a bug can break (UserError's require() is for what a user can
// cause): MESHSLICE_ASSERT(index < size, "slot ", index, " of ", size).
#define MESHSLICE_ASSERT(condition, ...)                                                 \
  do {                                                                                   \
    if (!(condition))                                                                    \
      ::meshslice::fail_invariant(__FILE__, __LINE__, ::meshslice::concat(__VA_ARGS__)); \
  } while (0)
