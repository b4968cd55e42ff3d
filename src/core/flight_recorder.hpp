#pragma once
// The communication flight recorder and its watchdog: what turns a silent hang into an error.
//
// Every communication operation of a rank (each collective, shift, send, receive, all-to-all and
// the small blocking all-reduces) is written into a ring buffer of its last N operations: kind,
// mesh axis and group, the group's operation number, bytes, peer, start and end. That write is
// all a healthy step pays. A watchdog thread wakes about once a second; when an operation has
// been outstanding longer than the timeout it prints the stuck operation and the recent history,
// writes OUT/flight-rank-R.json (atomically) and ends the job with MPI_Abort (exit status 4).
// An MPI error on any communicator derived from MPI_COMM_WORLD does the same at once (a message
// of the wrong size, a peer that vanished), instead of MPI's bare abort.
//
// Ranks of one group (one ring of one axis) start the group's collectives in the same order, so
// the group operation numbers line up across ranks: scripts/meshslice-flight-report reads every
// rank's dump and names the first operation where they disagree or one rank never arrived.
//
//     FlightRecorder::instance().start(settings);           // the trainer, from its deck
//     auto seq = FlightRecorder::instance().begin(info).seq;  // comm/request.cpp & co.
//     FlightRecorder::instance().end(seq);
//
// Fault injection (deck keys debug.*, for the tests of all this): one rank skips an operation,
// posts it one element short, or sleeps before it.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/comm_kind.hpp"

namespace meshslice {

// What the debug.inject deck key can do to one operation of one rank.
enum class InjectedFault : std::uint8_t { none, skip, wrong_size, sleep };
const char* injected_fault_name(InjectedFault fault);
InjectedFault parse_injected_fault(const std::string& name);  // UserError naming the choices

struct FlightSettings {
  std::size_t capacity = 64;     // operations kept per rank; 0 turns the recorder off
  double timeout_seconds = 300;  // 0: no watchdog
  bool watchdog = true;          // false: only stuck_for() applies the timeout (unit tests)
  std::string dump_dir;          // where flight-rank-R.json goes
  int rank = 0;                  // in MPI_COMM_WORLD
  InjectedFault inject = InjectedFault::none;
  int inject_rank = 0;
  std::uint64_t inject_at = 0;      // the rank's operation number (1-based) to hit
  double inject_sleep_seconds = 0;  // for InjectedFault::sleep
};

// One operation as the caller describes it.
struct CommOpInfo {
  CommKind kind = CommKind::all_gather;
  const char* axis = "";          // mesh axis name (dp, pp, row, col, tp) or "world"
  int group_first = 0;            // lowest world rank of the group: with axis, names the group
  std::uint64_t group_op = 0;     // the group's operation number (agrees across its ranks)
  std::size_t bytes = 0;          // this rank's message size
  std::size_t element_bytes = 0;  // for wrong_size: the posted message is one element short
  int peer = -1;                  // world rank of the peer of a send/receive/shift, else -1
};

struct FlightEntry {
  std::uint64_t seq = 0;  // this rank's operation number, from 1
  CommKind kind = CommKind::all_gather;
  char axis[8] = {};
  int group_first = 0;
  std::uint64_t group_op = 0;
  std::size_t bytes = 0;
  int peer = -1;
  double start = 0;  // seconds since start()
  double end = -1;   // -1 while outstanding
  InjectedFault fault = InjectedFault::none;
};

class FlightRecorder {
 public:
  static FlightRecorder& instance();
  ~FlightRecorder();

  // (Re)configures and, with a timeout, starts the watchdog and the MPI error handler.
  void start(const FlightSettings& settings);
  // Stops the watchdog (before MPI_Finalize) and forgets the history.
  void stop();
  bool enabled() const { return capacity_ > 0; }

  // Group membership, noted once per communicator (mesh/torus.cpp): the dump lists it so the
  // report knows which ranks should have run a group's operations.
  void note_group(const std::string& axis, const std::vector<int>& world_ranks);

  struct Ticket {
    std::uint64_t seq = 0;  // 0: not recorded
    InjectedFault fault = InjectedFault::none;
  };
  // Records the start; may sleep when that fault is injected here. A skip or wrong_size fault
  // is returned for the caller to carry out, only where it can: on a non-blocking operation,
  // whose engine posts the messages (`injectable`); a target that lands on a blocking one moves
  // to the next non-blocking one.
  Ticket begin(const CommOpInfo& op, bool injectable = false);
  void end(std::uint64_t seq);
  // Brackets a blocking wait for operation `seq`. A rank whose operations are outstanding while
  // it waits for none is busy elsewhere (computing, or stuck outside communication): the dump
  // and the message say so, which points at the rank that holds the others up.
  void wait_begin(std::uint64_t seq);
  void wait_end();

  // The recent history, oldest first (for tests and the dump).
  std::vector<FlightEntry> history() const;
  // The dump's text: {"rank", "reason", "now", "timeout_seconds", "groups", "operations"}.
  std::string dump_json(const std::string& reason) const;
  // Writes dump_dir/flight-rank-R.json atomically; returns its path ("" when it failed).
  std::string write_dump(const std::string& reason) const;

  // The oldest outstanding operation's age when it exceeds the timeout, else a negative number
  // (the watchdog's test, exposed for the unit tests).
  double stuck_for(std::uint64_t* seq) const;

  // Prints `reason` and the recent history on this rank, writes the dump, and ends the job
  // (MPI_Abort with kExitCommFailure): the watchdog's and the MPI error handler's last act.
  [[noreturn]] void abort_job(const std::string& reason) const;
  // "waiting for operation #N for S s" or "busy outside communication ... for S s".
  std::string state_line() const;

 private:
  FlightRecorder() = default;
  double now() const;
  void watch();

  mutable std::mutex mutex_;
  std::vector<FlightEntry> ring_;
  std::size_t capacity_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t outstanding_ = 0;
  double last_progress_ = 0;
  std::uint64_t waiting_on_ = 0;  // the operation a blocking wait is for, 0 outside one
  double state_since_ = 0;        // when the rank entered or left its last wait
  FlightSettings settings_;
  bool injected_ = false;
  std::chrono::steady_clock::time_point epoch_;
  struct Group {
    std::string axis;
    std::vector<int> members;
  };
  std::vector<Group> groups_;

  std::thread watchdog_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// RAII record of a blocking MPI call (MPI_Allreduce & co.):
//     RecordedOp op({CommKind::all_reduce, ring.name().c_str(), ...});
class RecordedOp {
 public:
  explicit RecordedOp(const CommOpInfo& op) : seq_(FlightRecorder::instance().begin(op).seq) {
    FlightRecorder::instance().wait_begin(seq_);
  }
  ~RecordedOp() {
    FlightRecorder::instance().wait_end();
    FlightRecorder::instance().end(seq_);
  }
  RecordedOp(const RecordedOp&) = delete;
  RecordedOp& operator=(const RecordedOp&) = delete;

 private:
  std::uint64_t seq_;
};

// The exit status of a job the watchdog or the MPI error handler ended.
constexpr int kExitCommFailure = 4;

}  // namespace meshslice
