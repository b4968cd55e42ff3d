#include "exec/sim_executor.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "exec/collective_cost.hpp"

namespace meshslice::sim {

SimTotals& SimTotals::operator+=(const SimTotals& o) {
  seconds += o.seconds;
  compute += o.compute;
  local += o.local;
  launch += o.launch;
  sync += o.sync;
  transfer += o.transfer;
  flops += o.flops;
  collectives += o.collectives;
  memory_bytes = std::max(memory_bytes, o.memory_bytes);
  return *this;
}

SimExecutor::SimExecutor(const hw::MachineModel& machine, int rows, int cols, int row, int col,
                         std::vector<TraceEvent>* events)
    : machine_(machine), rows_(rows), cols_(cols), row_(row), col_(col), events_(events) {
  require(rows >= 1 && cols >= 1 && row >= 0 && row < rows && col >= 0 && col < cols,
          "emulated chip (", row, ", ", col, ") is not on a ", rows, "x", cols, " mesh");
}

void SimExecutor::set_outer_axes(int dp, int dp_coord, int pp, int pp_coord) {
  require(dp >= 1 && pp >= 1 && dp_coord >= 0 && dp_coord < dp && pp_coord >= 0 && pp_coord < pp,
          "emulated chip at dp ", dp_coord, ", pp ", pp_coord, " is not on a dp", dp, " x pp", pp,
          " mesh");
  dp_ = dp;
  dp_coord_ = dp_coord;
  pp_ = pp;
  pp_coord_ = pp_coord;
}

int SimExecutor::coord(Axis axis) const {
  switch (axis) {
    case Axis::row: return row_;
    case Axis::col: return col_;
    case Axis::tp: return row_ * cols_ + col_;
    case Axis::dp: return dp_coord_;
    case Axis::pp: return pp_coord_;
  }
  return 0;
}

int SimExecutor::size(Axis axis) const {
  switch (axis) {
    case Axis::row: return rows_;
    case Axis::col: return cols_;
    case Axis::tp: return rows_ * cols_;
    case Axis::dp: return dp_;
    case Axis::pp: return pp_;
  }
  return 1;
}

int SimExecutor::engine_of(Axis axis, int direction) const {
  const int way = machine_.machine.ici.ring_directions == 1 ? 0 : direction;
  return 1 + 2 * static_cast<int>(axis) + way;  // Axis: dp, pp, row, col, tp
}

SimExecutor::Travel SimExecutor::shift_travel(int chips, int displacement) {
  if (chips <= 1) return Travel::forward;
  const int forward = ((displacement % chips) + chips) % chips;
  if (forward != chips - forward)
    return forward < chips - forward ? Travel::forward : Travel::backward;
  // Halfway round both ways are as short: go the way asked, so shifts by +R/2 and -R/2 (Wang's
  // two streams) use the two directions instead of queueing on one. A ring of 2 is no exception:
  // like every ring of a machine with ring_directions 2, it has two link directions (its
  // collectives use both), here both between the same two chips.
  return displacement >= 0 ? Travel::forward : Travel::backward;
}

hw::Ring SimExecutor::ring_of(Axis axis) const {
  switch (axis) {
    case Axis::row: return hw::Ring::dim0;
    case Axis::col: return hw::Ring::dim1;
    case Axis::tp: return hw::Ring::ring1d;
    case Axis::dp: return hw::Ring::dp;
    case Axis::pp: return hw::Ring::pp;
  }
  return hw::Ring::ring1d;
}

SimExecutor::Mat SimExecutor::alloc(std::size_t rows, std::size_t cols, const char*) {
  const auto make = [&] {  // a new buffer (a plan's replay returns the rehearsal's)
    totals_.memory_bytes += double(rows) * double(cols) * machine_.machine.chip.element_bytes;
    return Mat(rows, cols);
  };
  return workspace_ ? workspace_->buffer(rows, cols, make) : make();
}

void SimExecutor::record(const char* name, TraceLane lane, double start, double end, double bytes,
                         double flops) {
  if (events_) events_->push_back(TraceEvent{name, lane, start, end, bytes, flops});
}

double SimExecutor::core_bandwidth(double start, double duration) {
  const double full = machine_.machine.chip.hbm_bandwidth;
  if (!machine_.machine.ici.nic_hbm_contention || duration <= 0) return full;
  const double end = start + duration;
  double bytes = 0;
  for (auto& ring : nic_) {
    // Activities that ended before the thread's clock cannot overlap anything issued from now
    // on; the rest are in time order, so the scan stops at the first one starting after `end`.
    while (!ring.empty() && ring.front().end <= clock_) ring.pop_front();
    for (const NicActivity& a : ring) {
      if (a.start >= end) break;
      bytes += a.rate * std::max(0.0, std::min(end, a.end) - std::max(start, a.start));
    }
  }
  // The NIC is served first; the cores always keep a tenth (a floor against a degenerate model,
  // never reached with the calibrated links, whose rates are a fraction of HBM's).
  return std::max(0.1 * full, full - bytes / duration);
}

SimExecutor::OpId SimExecutor::communicate(const char* name, Axis axis, const hw::CommCost& cost,
                                           const Mat& in, const Mat& out, double bytes_sent,
                                           Travel travel) {
  if (rehearsing()) return issue(0.0);  // nothing is timed; the op is complete at once
  const int forward = engine_of(axis, 0), backward = engine_of(axis, 1);
  const int first = travel == Travel::backward ? backward : forward;
  const int last = travel == Travel::forward ? forward : backward;
  double start = std::max(clock_, in.ready());
  for (int e = first; e <= last; ++e) start = std::max(start, engine_free_[e]);
  const double end = start + cost.total();
  for (int e = first; e <= last; ++e) engine_free_[e] = end;
  out.mark_written(end);
  totals_.launch += cost.launch;
  totals_.sync += cost.sync;
  totals_.transfer += cost.transfer;
  ++totals_.collectives;
  if (cost.hbm_bytes > 0 && end > start)
    nic_[first].push_back({start, end, cost.hbm_bytes / (end - start)});
  static constexpr TraceLane lanes[] = {TraceLane::dp_links, TraceLane::pp_links,
                                        TraceLane::row_links, TraceLane::col_links,
                                        TraceLane::tp_links};  // in Axis order
  record(name, lanes[static_cast<int>(axis)], start, end, bytes_sent, 0.0);
  return issue(end);
}

SimExecutor::OpId SimExecutor::issue(double end) {
  in_flight_.emplace(next_op_, end);
  return next_op_++;
}

void SimExecutor::local_copy(const char* name, const Mat* in, const Mat& out, double bytes_read,
                             double bytes_written) {
  if (rehearsing()) return;
  double start = std::max({clock_, engine_free_[compute_engine], out.ready()});
  if (in) start = std::max(start, in->ready());
  const double guess = machine_.chip.copy_seconds(bytes_read, bytes_written);
  const double seconds =
      machine_.chip.copy_seconds(bytes_read, bytes_written, core_bandwidth(start, guess));
  clock_ = engine_free_[compute_engine] = start + seconds;
  out.mark_written(clock_);
  totals_.local += seconds;
  record(name, TraceLane::local, start, clock_, 0.0, 0.0);
}

void SimExecutor::slice(const Mat& x, const Mat& sub, MatrixDim, const SliceSpec&) {
  const double bytes = sub.size() * element_bytes();
  local_copy("slice", &x, sub, bytes, bytes);
}

void SimExecutor::unslice(const Mat& sub, const Mat& x, MatrixDim, const SliceSpec&, double beta) {
  const double bytes = sub.size() * element_bytes();
  // Accumulating (beta != 0) reads the destination's slice too.
  local_copy("unslice", &sub, x, beta != 0.0 ? 2 * bytes : bytes, bytes);
}

void SimExecutor::copy(const Mat& from, const Mat& to) {
  const double bytes = from.size() * element_bytes();
  local_copy("copy", &from, to, bytes, bytes);
}

void SimExecutor::scale(const Mat& x, double) {
  const double bytes = x.size() * element_bytes();
  local_copy("scale", &x, x, bytes, bytes);
}

void SimExecutor::zero(const Mat& x) {
  local_copy("zero", nullptr, x, 0.0, x.size() * element_bytes());
}

SimExecutor::Travel SimExecutor::travel(const Collective<Mat>& c) const {
  switch (c.kind) {
    case CommKind::send: return c.peer > 0 ? Travel::forward : Travel::backward;
    case CommKind::recv: return c.peer < 0 ? Travel::forward : Travel::backward;
    case CommKind::shift: return shift_travel(size(c.axis), c.peer);
    default: return Travel::both;
  }
}

SimExecutor::OpId SimExecutor::start(const Collective<Mat>& c) {
  const int P = size(c.axis);
  const double shard = c.shard_elements() * element_bytes();
  return communicate(c.name(), c.axis,
                     collective_cost(machine_.ici, ring_of(c.axis), c.kind, P, shard, c.peer), c.in,
                     c.out, bytes_sent(c.kind, P, shard), travel(c));
}

double SimExecutor::completion(OpId op) const {
  const auto it = in_flight_.find(op);
  MESHSLICE_ASSERT(it != in_flight_.end(), "SimExecutor::completion: operation ", op,
                   " is not in flight");
  return it->second;
}

void SimExecutor::complete_no_earlier(OpId op, double time) {
  const auto it = in_flight_.find(op);
  MESHSLICE_ASSERT(it != in_flight_.end(), "SimExecutor::complete_no_earlier: operation ", op,
                   " is not in flight");
  it->second = std::max(it->second, time);
}

void SimExecutor::wait(OpId op) {
  const auto it = in_flight_.find(op);
  if (it == in_flight_.end()) return;
  clock_ = std::max(clock_, it->second);
  in_flight_.erase(it);
}

void SimExecutor::wait_all() {
  for (const auto& [op, end] : in_flight_) clock_ = std::max(clock_, end);
  in_flight_.clear();
}

hw::GemmTiming SimExecutor::time_gemm(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                                      double start) {
  const hw::GemmTiming t = machine_.chip.gemm(m, n, k, accumulate);
  if (!machine_.machine.ici.nic_hbm_contention) return t;
  return machine_.chip.gemm(m, n, k, accumulate, core_bandwidth(start, t.seconds));
}

void SimExecutor::gemm(double, const Mat& a, bool transpose_a, const Mat& b, bool, double beta,
                       const Mat& c) {
  if (rehearsing()) return;
  const std::size_t m = c.extent(0), n = c.extent(1);
  const std::size_t k = transpose_a ? a.extent(0) : a.extent(1);
  const double start =
      std::max({clock_, engine_free_[compute_engine], a.ready(), b.ready(), c.ready()});
  const hw::GemmTiming t = time_gemm(m, n, k, beta != 0.0, start);
  clock_ = engine_free_[compute_engine] = start + t.seconds;
  c.mark_written(clock_);
  totals_.compute += t.seconds;
  totals_.flops += t.flops;
  record("gemm", TraceLane::compute, start, clock_, 0.0, t.flops);
}

void SimExecutor::local_work(const char* name, const LocalWork& work) {
  if (rehearsing()) return;
  const double start = std::max(clock_, engine_free_[compute_engine]);
  double end = start, flops = 0;
  for (const LocalGemm& g : work.gemms) {
    const hw::GemmTiming t = time_gemm(g.m, g.n, g.k, g.accumulate, end);
    end += g.count * t.seconds;
    flops += g.count * t.flops;
  }
  totals_.compute += end - start;
  totals_.flops += flops;
  const double bytes = work.elements * element_bytes();
  const double guess = machine_.chip.copy_seconds(bytes, 0);
  const double streaming = machine_.chip.copy_seconds(bytes, 0, core_bandwidth(end, guess));
  totals_.local += streaming;
  clock_ = engine_free_[compute_engine] = end + streaming;
  record(name, TraceLane::compute, start, clock_, 0.0, flops);
}

void SimExecutor::blocking_communication(const char* name, Axis axis, const CommWork& work) {
  const int P = size(axis);
  const double bytes = work.elements * element_bytes();
  // An exchange sends its pieces for the others; a ring all-reduce 2 (P-1)/P shares.
  const CommKind kind =
      work.pattern == CommWork::all_to_all ? CommKind::all_to_all : CommKind::all_reduce;
  const Mat none;
  wait(communicate(name, axis, collective_cost(machine_.ici, ring_of(axis), kind, P, bytes), none,
                   none, bytes_sent(kind, P, bytes)));
}

SimTotals SimExecutor::totals() const {
  SimTotals t = totals_;
  t.seconds = clock_;
  for (double end : engine_free_) t.seconds = std::max(t.seconds, end);
  return t;
}

}  // namespace meshslice::sim
