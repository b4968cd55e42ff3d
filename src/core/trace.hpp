#pragma once
// A per-rank timeline of what an executor did: local GEMMs, collectives (from start to the
// moment their completion was observed), local copies. Written as Chrome trace JSON (open in
// Perfetto or chrome://tracing, one process per rank, one lane per engine) and condensed into
// an overlap summary: how much communication time was hidden behind computation.
#include <mpi.h>

#include <string>
#include <vector>

namespace meshslice {

// `phase` marks spans of a caller's program (a training step, its forward pass): neither
// computation nor communication, only context for a reader of the timeline.
enum class TraceLane {
  compute = 0,
  row_links,
  col_links,
  tp_links,
  dp_links,
  pp_links,
  local,
  other,
  phase,
  lane_count
};
const char* lane_name(TraceLane lane);

struct TraceEvent {
  std::string name;  // "gemm", "all_gather", ...
  TraceLane lane;
  double start = 0;  // seconds since the trace's origin
  double end = 0;
  double bytes = 0;  // bytes this rank sent for a collective (0 otherwise)
  double flops = 0;  // for GEMMs
  bool communication() const {
    return lane == TraceLane::row_links || lane == TraceLane::col_links ||
           lane == TraceLane::tp_links || lane == TraceLane::dp_links ||
           lane == TraceLane::pp_links || lane == TraceLane::other;
  }
};

struct OverlapSummary {
  double wall = 0;           // first event start to last event end
  double compute = 0;        // time with a GEMM running
  double communication = 0;  // time with any collective in flight
  double exposed = 0;        // communication time with no GEMM running
  double hidden_fraction() const { return communication > 0 ? 1.0 - exposed / communication : 0.0; }
};

class Trace {
 public:
  Trace();
  double now() const;  // seconds since construction (MPI_Wtime based)
  void add(TraceEvent event) { events_.push_back(std::move(event)); }
  void clear() { events_.clear(); }
  // Runs work() and records it as one event on `lane` (a span of the caller's program).
  template <class F>
  void span(const char* name, TraceLane lane, F&& work) {
    const double start = now();
    work();
    add(TraceEvent{name, lane, start, now()});
  }
  const std::vector<TraceEvent>& events() const { return events_; }

  OverlapSummary summarize() const;
  // One line per event in start order, times in ms from the first event: the same timeline
  // as the JSON, readable in a terminal or a log.
  std::string text_timeline() const;

  // The events as Chrome trace JSON objects (no enclosing array), process id = `rank`.
  std::string chrome_events_json(int rank) const;

 private:
  double origin_;
  std::vector<TraceEvent> events_;
};

// Overlap summary of a set of events (used for the whole trace or a window of it).
OverlapSummary summarize_overlap(const std::vector<TraceEvent>& events);

// Collective over `comm`: rank 0 writes every rank's events into one Chrome trace file.
void write_chrome_trace(const Trace& trace, const std::string& path, MPI_Comm comm);

}  // namespace meshslice
