#include "core/trace.hpp"

#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"
#include "core/output_file.hpp"

namespace meshslice {

const char* lane_name(TraceLane lane) {
  switch (lane) {
    case TraceLane::compute: return "compute";
    case TraceLane::row_links: return "row ring";
    case TraceLane::col_links: return "col ring";
    case TraceLane::tp_links: return "tp ring";
    case TraceLane::dp_links: return "dp ring";
    case TraceLane::pp_links: return "pp links";
    case TraceLane::local: return "local copies";
    case TraceLane::other: return "other rings";
    case TraceLane::phase: return "phases";
    case TraceLane::lane_count: break;
  }
  return "?";
}

namespace {

struct Interval {
  double start;
  double end;
};

// Sorted, non-overlapping union of intervals.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& i : intervals) {
    if (!out.empty() && i.start <= out.back().end)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

double length(const std::vector<Interval>& intervals) {
  double total = 0;
  for (const auto& i : intervals) total += i.end - i.start;
  return total;
}

// Length of the intersection of two merged interval lists.
double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    total += std::max(0.0, std::min(a[i].end, b[j].end) - std::max(a[i].start, b[j].start));
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return total;
}

}  // namespace

Trace::Trace() : origin_(MPI_Wtime()) {}

double Trace::now() const { return MPI_Wtime() - origin_; }

OverlapSummary summarize_overlap(const std::vector<TraceEvent>& events) {
  OverlapSummary s;
  if (events.empty()) return s;
  std::vector<Interval> compute, comm;
  double first = events.front().start, last = events.front().end;
  for (const auto& e : events) {
    first = std::min(first, e.start);
    last = std::max(last, e.end);
    if (e.lane == TraceLane::compute) compute.push_back({e.start, e.end});
    if (e.communication()) comm.push_back({e.start, e.end});
  }
  const auto compute_union = merged(compute);
  const auto comm_union = merged(comm);
  s.wall = last - first;
  s.compute = length(compute_union);
  s.communication = length(comm_union);
  s.exposed = s.communication - overlap(comm_union, compute_union);
  return s;
}

OverlapSummary Trace::summarize() const { return summarize_overlap(events_); }

std::string Trace::text_timeline() const {
  std::vector<TraceEvent> sorted = events_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.start < b.start; });
  const double origin = sorted.empty() ? 0.0 : sorted.front().start;
  std::string text;
  char line[160];
  for (const auto& e : sorted) {
    std::snprintf(line, sizeof line, "%10.3f ms  %10.3f ms  %-13s %-24s %12.0f bytes\n",
                  (e.start - origin) * 1e3, (e.end - origin) * 1e3, lane_name(e.lane),
                  e.name.c_str(), e.bytes);
    text += line;
  }
  return text;
}

std::string Trace::chrome_events_json(int rank) const {
  std::string json;
  char line[512];
  for (int lane = 0; lane < static_cast<int>(TraceLane::lane_count); ++lane) {
    std::snprintf(line, sizeof line,
                  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                  "\"args\":{\"name\":\"%s\"}},\n",
                  rank, lane, lane_name(static_cast<TraceLane>(lane)));
    json += line;
  }
  for (const auto& e : events_) {
    std::snprintf(line, sizeof line,
                  "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                  "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"bytes\":%.0f,\"flops\":%.0f}},\n",
                  e.name.c_str(), lane_name(e.lane), rank, static_cast<int>(e.lane), e.start * 1e6,
                  (e.end - e.start) * 1e6, e.bytes, e.flops);
    json += line;
  }
  return json;
}

void write_chrome_trace(const Trace& trace, const std::string& path, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::string mine = trace.chrome_events_json(rank);
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, comm);
  if (rank != 0) return;
  if (!all.empty()) all.resize(all.size() - 2);  // drop the last ",\n"
  write_output_file(path, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" + all + "\n]}\n");
}

}  // namespace meshslice
