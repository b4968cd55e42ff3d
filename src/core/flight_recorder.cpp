#include "core/flight_recorder.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <iostream>
#include <sstream>

#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/output_file.hpp"

namespace meshslice {

namespace {

constexpr const char* kFaultNames[] = {"none", "skip", "wrong_size", "sleep"};

// Operations shown on the terminal when the job is ended (the dump holds all of them).
constexpr std::size_t kPrintedHistory = 8;

std::string describe(const FlightEntry& e) {
  std::ostringstream out;
  out << "#" << e.seq << " " << comm_kind_name(e.kind) << " on '" << e.axis << "' (group of rank "
      << e.group_first << ", its op " << e.group_op << "), " << e.bytes << " bytes";
  if (e.peer >= 0) out << ", peer rank " << e.peer;
  if (e.fault != InjectedFault::none) out << ", injected fault " << injected_fault_name(e.fault);
  return out.str();
}

// MPI calls this instead of aborting silently: the message names the failure, the dump keeps
// the history, and the job ends as on a timeout.
void on_mpi_error(MPI_Comm*, int* code, ...) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(*code, text, &length);
  FlightRecorder::instance().abort_job(concat("MPI error in a communication operation: ", text));
}

}  // namespace

const char* injected_fault_name(InjectedFault fault) {
  return kFaultNames[static_cast<int>(fault)];
}

InjectedFault parse_injected_fault(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kFaultNames); ++i)
    if (name == kFaultNames[i]) return static_cast<InjectedFault>(i);
  throw UserError(concat("debug.inject '", name, "' is not one of none, skip, wrong_size, sleep"));
}

FlightRecorder& FlightRecorder::instance() {
  static FlightRecorder recorder;
  return recorder;
}

FlightRecorder::~FlightRecorder() { stop(); }

double FlightRecorder::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

void FlightRecorder::start(const FlightSettings& settings) {
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  settings_ = settings;
  capacity_ = settings.capacity;
  ring_.assign(capacity_, FlightEntry{});
  next_seq_ = 1;
  outstanding_ = 0;
  injected_ = false;
  epoch_ = std::chrono::steady_clock::now();
  last_progress_ = 0;
  waiting_on_ = 0;
  state_since_ = 0;
  stopping_ = false;
  if (capacity_ == 0) return;
  int mpi_ready = 0;
  MPI_Initialized(&mpi_ready);
  if (mpi_ready) {
    MPI_Errhandler handler;
    MPI_Comm_create_errhandler(on_mpi_error, &handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
    MPI_Errhandler_free(&handler);
  }
  if (settings.timeout_seconds > 0 && settings.watchdog)
    watchdog_ = std::thread([this] { watch(); });
}

void FlightRecorder::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = 0;
  ring_.clear();
}

void FlightRecorder::note_group(const std::string& axis, const std::vector<int>& world_ranks) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Group& g : groups_)
    if (g.axis == axis && g.members == world_ranks) return;
  groups_.push_back({axis, world_ranks});
}

FlightRecorder::Ticket FlightRecorder::begin(const CommOpInfo& op, bool injectable) {
  if (capacity_ == 0) return {};
  Ticket ticket;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ticket.seq = next_seq_++;
    // The target is armed from its operation number on and fires at the first operation that
    // can carry it out (a skip or a short message needs a non-blocking one; a sleep needs none).
    if (!injected_ && settings_.inject != InjectedFault::none &&
        settings_.rank == settings_.inject_rank && ticket.seq >= settings_.inject_at &&
        (injectable || settings_.inject == InjectedFault::sleep)) {
      injected_ = true;
      ticket.fault = settings_.inject;
    }
    FlightEntry& e = ring_[(ticket.seq - 1) % capacity_];
    e = FlightEntry{};
    e.seq = ticket.seq;
    e.kind = op.kind;
    std::strncpy(e.axis, op.axis, sizeof(e.axis) - 1);
    e.group_first = op.group_first;
    e.group_op = op.group_op;
    e.bytes = op.bytes;
    if (ticket.fault == InjectedFault::wrong_size && e.bytes >= op.element_bytes)
      e.bytes -= op.element_bytes;
    e.peer = op.peer;
    e.fault = ticket.fault;
    e.start = now();
    ++outstanding_;
  }
  if (ticket.fault == InjectedFault::sleep) {
    std::cerr << "debug.inject: rank " << settings_.rank << " sleeps "
              << settings_.inject_sleep_seconds << " s before operation #" << ticket.seq
              << std::endl;
    std::this_thread::sleep_for(std::chrono::duration<double>(settings_.inject_sleep_seconds));
    ticket.fault = InjectedFault::none;
  }
  return ticket;
}

void FlightRecorder::end(std::uint64_t seq) {
  if (seq == 0 || capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  FlightEntry& e = ring_[(seq - 1) % capacity_];
  const double t = now();
  if (e.seq == seq) e.end = t;
  if (outstanding_ > 0) --outstanding_;
  last_progress_ = t;
}

void FlightRecorder::wait_begin(std::uint64_t seq) {
  if (seq == 0 || capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_on_ = seq;
  state_since_ = now();
}

void FlightRecorder::wait_end() {
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_on_ = 0;
  state_since_ = now();
}

std::string FlightRecorder::state_line() const {
  const double t = now();
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  if (waiting_on_ != 0)
    out << "waiting for operation #" << waiting_on_ << " for " << t - state_since_ << " s";
  else
    out << "busy outside communication (computing, or stuck elsewhere) for " << t - state_since_
        << " s";
  return out.str();
}

std::vector<FlightEntry> FlightRecorder::history() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<FlightEntry> out;
  for (const FlightEntry& e : ring_)
    if (e.seq != 0) out.push_back(e);
  std::sort(out.begin(), out.end(),
            [](const FlightEntry& a, const FlightEntry& b) { return a.seq < b.seq; });
  return out;
}

double FlightRecorder::stuck_for(std::uint64_t* seq) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (outstanding_ == 0 || settings_.timeout_seconds <= 0) return -1;
  // The oldest outstanding operation still in the ring; one pushed out of it by later ones
  // counts from the last sign of progress.
  double oldest = -1;
  std::uint64_t which = 0;
  for (const FlightEntry& e : ring_) {
    if (e.seq != 0 && e.end < 0 && (oldest < 0 || e.start < oldest)) {
      oldest = e.start;
      which = e.seq;
    }
  }
  if (oldest < 0) oldest = last_progress_;
  const double age = now() - oldest;
  if (seq) *seq = which;
  return age > settings_.timeout_seconds ? age : -1;
}

std::string FlightRecorder::dump_json(const std::string& reason) const {
  const std::vector<FlightEntry> entries = history();
  std::lock_guard<std::mutex> lock(mutex_);
  json::Value root = json::Value::object();
  root.set("rank", settings_.rank);
  root.set("reason", reason);
  root.set("now", now());
  root.set("timeout_seconds", settings_.timeout_seconds);
  root.set("capacity", capacity_);
  root.set("waiting_on", waiting_on_ == 0 ? json::Value() : json::Value(waiting_on_));
  root.set("state_since", state_since_);
  json::Value& groups = root.set("groups", json::Value::array());
  for (const Group& g : groups_) {
    json::Value group = json::Value::object();
    group.set("axis", g.axis);
    json::Value& members = group.set("members", json::Value::array());
    for (int r : g.members) members.push_back(r);
    groups.push_back(std::move(group));
  }
  json::Value& ops = root.set("operations", json::Value::array());
  for (const FlightEntry& e : entries) {
    json::Value op = json::Value::object();
    op.set("seq", e.seq);
    op.set("kind", comm_kind_name(e.kind));
    op.set("axis", std::string(e.axis));
    op.set("group_first", e.group_first);
    op.set("group_op", e.group_op);
    op.set("bytes", e.bytes);
    op.set("peer", e.peer);
    op.set("start", e.start);
    op.set("end", e.end < 0 ? json::Value() : json::Value(e.end));
    if (e.fault != InjectedFault::none) op.set("injected", injected_fault_name(e.fault));
    ops.push_back(std::move(op));
  }
  return root.dump(1);
}

std::string FlightRecorder::write_dump(const std::string& reason) const {
  const std::string dir = settings_.dump_dir.empty() ? "." : settings_.dump_dir;
  const std::string path =
      (std::filesystem::path(dir) / concat("flight-rank-", settings_.rank, ".json")).string();
  try {
    std::filesystem::create_directories(dir);
    write_output_file(path, dump_json(reason) + "\n");
    return path;
  } catch (const std::exception& e) {
    std::cerr << "flight recorder: could not write " << path << ": " << e.what() << std::endl;
    return "";
  }
}

void FlightRecorder::abort_job(const std::string& reason) const {
  std::ostringstream out;
  out << "error on rank " << settings_.rank << ": " << reason << "\n";
  out << "  rank " << settings_.rank << " is " << state_line() << "\n";
  const std::vector<FlightEntry> entries = history();
  const std::size_t first = entries.size() > kPrintedHistory ? entries.size() - kPrintedHistory : 0;
  out << "  last " << entries.size() - first << " communication operations of rank "
      << settings_.rank << " (oldest first):\n";
  for (std::size_t i = first; i < entries.size(); ++i)
    out << "    " << describe(entries[i]) << (entries[i].end < 0 ? "  <- outstanding" : "") << "\n";
  const std::string path = write_dump(reason);
  if (!path.empty()) out << "  history written to " << path << "\n";
  out << "  compare every rank's history with: meshslice-flight-report "
      << (settings_.dump_dir.empty() ? "." : settings_.dump_dir) << "\n";
  std::cerr << out.str() << std::flush;
  MPI_Abort(MPI_COMM_WORLD, kExitCommFailure);
  std::_Exit(kExitCommFailure);
}

void FlightRecorder::watch() {
  // Waking once a second (or four times per timeout when that is shorter) bounds the time from
  // the timeout to the abort without costing the step anything.
  const double period = std::min(1.0, settings_.timeout_seconds / 4);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::duration<double>(period));
    if (stopping_) break;
    lock.unlock();
    std::uint64_t seq = 0;
    const double age = stuck_for(&seq);
    if (age >= 0) {
      std::string what = "no operation completed for " + std::to_string(age) + " s";
      for (const FlightEntry& e : history())
        if (e.seq == seq) what = describe(e);
      abort_job(concat("communication timeout: operation ", what, " has been outstanding for ",
                       static_cast<int>(age), " s (comm.timeout_seconds is ",
                       settings_.timeout_seconds,
                       "); a peer never started it, started another one, or stopped"));
    }
    lock.lock();
  }
}

}  // namespace meshslice
