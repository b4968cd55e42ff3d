#pragma once
// Progress lines for long runs: printed by rank 0 only, prefixed with the app name, and flushed
// at once so that a batch job's log shows how far it got even when the job is killed.
#include <string>

#include "core/errors.hpp"

namespace meshslice {

// run_app sets this to the app's name; lines are prefixed with "NAME: ".
void set_log_prefix(const std::string& app_name);

// Prints one line to stdout on rank 0 of MPI_COMM_WORLD (or always, outside MPI).
void log_line(const std::string& message);

// log_info("size ", n, " done in ", seconds, " s");
template <class... Parts>
void log_info(const Parts&... parts) {
  log_line(concat(parts...));
}

}  // namespace meshslice
