#pragma once
// Combined mode: run an algorithm for real and emulated at once. Every op goes both to a real
// executor (RealExecutor: data, MPI) and to a SimExecutor emulating this rank's chip of the
// same mesh on a machine description, so one run gives the real result and the emulated
// target-machine time (e.g. TPUv4) of exactly the ops that ran:
//
//     RealExecutor<float> real(torus, comm);
//     sim::CombinedExecutor<RealExecutor<float>> ex(real, machine);
//     GemmPlan<sim::CombinedExecutor<RealExecutor<float>>> plan(ex, algorithm, problem, options);
//     plan.run(ex.wrap(a), ex.wrap(b), ex.wrap(c));
//     ex.wait_all();
//     double tpuv4_seconds = ex.emulated().totals().seconds;
//
// The emulated clock never waits for the real one: it is the time the ops would take on the
// emulated machine, whatever the host machine's speed. Across pipeline stages the emulated clocks
// meet: a message on the pp axis carries its sender's emulated arrival time, and the receive
// completes on the emulated chip no earlier than that, so a stage waits for its neighbour's
// emulated work where the real one waits for the real work (the schedule's bubble shows in
// both).
//
// A caller written over any executor (model/transformer.hpp) runs on this one as on the real
// executor: its own kernels and blocking collectives go through compute() and communicate()
// with what they cost (exec/caller_work.hpp), which the real executor runs and the emulated
// chip times; real() and compute_space() reach the real executor for the rest.
#include <mpi.h>

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "exec/sim_executor.hpp"
#include "exec/starts_collectives.hpp"

namespace meshslice::sim {

// A matrix of both executors: the real data and its data-free twin.
template <class Real>
struct CombinedMat {
  typename Real::Mat real;
  SimMat sim;
  std::size_t extent(std::size_t dim) const { return sim.extent(dim); }
};

// A partial all-gather's output for a GEMM on both executors (the real one's may be in bf16);
// every matrix is one.
template <class Real>
struct CombinedGathered {
  CombinedGathered() = default;
  CombinedGathered(const CombinedMat<Real>& m) : real(m.real), sim(m.sim) {}  // NOLINT: implicit
  typename Real::Gathered real;
  SimMat sim;
  std::size_t extent(std::size_t dim) const { return sim.extent(dim); }
};

template <class Real>
class CombinedExecutor : public StartsCollectives<CombinedExecutor<Real>, CombinedMat<Real>> {
  using Starts = StartsCollectives<CombinedExecutor<Real>, CombinedMat<Real>>;

 public:
  using Mat = CombinedMat<Real>;
  using Gathered = CombinedGathered<Real>;
  using Scalar = typename Real::Scalar;
  static constexpr bool holds_data = Real::holds_data;
  using OpId = std::size_t;
  // A plan's workspace: one for each executor, rehearsed and replayed together.
  struct Workspace {
    typename Real::Workspace real;
    SimExecutor::Workspace sim;
    void rehearse() {
      real.rehearse();
      sim.rehearse();
    }
    void replay() {
      real.replay();
      sim.replay();
    }
    bool rehearsing() const { return real.rehearsing(); }
    std::size_t bytes() const { return real.bytes(); }  // the emulated side holds no memory
    std::size_t operand_as_given(int which) const { return real.operand_as_given(which); }
    void check_replayed() const {
      real.check_replayed();
      sim.check_replayed();
    }
  };

  CombinedExecutor(Real& real, const hw::MachineModel& machine,
                   std::vector<TraceEvent>* events = nullptr)
      : real_(real),
        sim_(machine, real.mesh_rows(), real.mesh_cols(), real.coord(Axis::row),
             real.coord(Axis::col), events) {
    sim_.set_outer_axes(real.size(Axis::dp), real.coord(Axis::dp), real.size(Axis::pp),
                        real.coord(Axis::pp));
    // The emulated times travel beside the data, on a communicator of their own.
    if (real.size(Axis::pp) > 1) MPI_Comm_dup(real.torus().axis(Axis::pp).comm(), &clocks_);
  }
  ~CombinedExecutor() {
    if (clocks_ != MPI_COMM_NULL) MPI_Comm_free(&clocks_);
  }
  CombinedExecutor(const CombinedExecutor&) = delete;
  CombinedExecutor& operator=(const CombinedExecutor&) = delete;

  // The caller's shards, for passing to run_gemm.
  Mat wrap(const typename Real::Mat& m) const { return {m, SimMat(m.extent(0), m.extent(1))}; }
  const SimExecutor& emulated() const { return sim_; }
  SimExecutor& emulated() { return sim_; }
  Real& real() { return real_; }

  const Torus& torus() const { return real_.torus(); }
  const auto& compute_space() const { return real_.compute_space(); }

  // The caller's own work: run for real, timed on the emulated chip.
  template <class F>
  void compute(const char* name, const LocalWork& cost, F&& work) {
    real_.compute(name, cost, work);
    sim_.local_work(name, cost);
  }
  template <class F>
  void communicate(const char* name, Axis axis, const CommWork& cost, F&& work) {
    real_.communicate(name, axis, cost, work);
    sim_.blocking_communication(name, axis, cost);
  }
  template <class F>
  void phase(const char* name, F&& work) {
    real_.phase(name, work);
  }

  int mesh_rows() const { return real_.mesh_rows(); }
  int mesh_cols() const { return real_.mesh_cols(); }
  int coord(Axis axis) const { return real_.coord(axis); }
  int size(Axis axis) const { return real_.size(axis); }

  Mat alloc(std::size_t rows, std::size_t cols, const char* label) {
    return {real_.alloc(rows, cols, label), sim_.alloc(rows, cols, label)};
  }
  Gathered alloc_gathered(std::size_t rows, std::size_t cols, const char* label) {
    Gathered g;
    g.real = real_.alloc_gathered(rows, cols, label);
    g.sim = sim_.alloc(rows, cols, label);
    return g;
  }
  Mat matrix_of(const Gathered& g) const { return {real_.matrix_of(g.real), g.sim}; }
  bool keeps_operands_in_bf16() const { return real_.keeps_operands_in_bf16(); }
  Gathered wrap_operand(const GemmOperand<Scalar>& g) const {
    Gathered c;
    c.real = real_.wrap_operand(g);
    c.sim = SimMat(g.extent(0), g.extent(1));
    return c;
  }
  Gathered shared_operand(const Mat& m) {
    Gathered g;
    g.real = real_.shared_operand(m.real);
    g.sim = m.sim;
    return g;
  }
  void reserve_shared_operand(std::size_t rows, std::size_t cols) {
    real_.reserve_shared_operand(rows, cols);
  }
  void reserve_rounding(std::size_t a_elements, std::size_t b_elements) {
    real_.reserve_rounding(a_elements, b_elements);
  }
  std::size_t reserve_messages(std::size_t count, std::size_t elements) {
    return real_.reserve_messages(count, elements);
  }
  Mat placeholder(std::size_t rows, std::size_t cols) const {
    return {real_.placeholder(rows, cols), sim_.placeholder(rows, cols)};
  }
  void use_workspace(Workspace* workspace) {
    real_.use_workspace(workspace ? &workspace->real : nullptr);
    sim_.use_workspace(workspace ? &workspace->sim : nullptr);
  }

  Mat rows(const Mat& x, std::size_t first, std::size_t count) const {
    return {real_.rows(x.real, first, count), sim_.rows(x.sim, first, count)};
  }

  void slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec) {
    real_.slice(x.real, sub.real, dim, spec);
    sim_.slice(x.sim, sub.sim, dim, spec);
  }
  void unslice(const Mat& sub, const Mat& x, MatrixDim dim, const SliceSpec& spec,
               double beta = 0) {
    real_.unslice(sub.real, x.real, dim, spec, beta);
    sim_.unslice(sub.sim, x.sim, dim, spec, beta);
  }
  void copy(const Mat& from, const Mat& to) {
    real_.copy(from.real, to.real);
    sim_.copy(from.sim, to.sim);
  }
  void zero(const Mat& x) {
    real_.zero(x.real);
    sim_.zero(x.sim);
  }
  void scale(const Mat& x, double factor) {
    real_.scale(x.real, factor);
    sim_.scale(x.sim, factor);
  }

  // The one description goes to both sides. A pipeline message also carries the sender's
  // emulated clock: when its data lands at the receiver.
  OpId start(const Collective<Mat>& c) {
    const OpId op = track(real_.start(c.on([](const Mat& m) { return m.real; })),
                          sim_.start(c.on([](const Mat& m) { return m.sim; })));
    const bool message = c.kind == CommKind::send || c.kind == CommKind::recv;
    if (message && carries_clock(c.axis)) {
      Stamp& stamp = stamps_[op];
      stamp.receive = c.kind == CommKind::recv;
      if (stamp.receive) {
        MPI_Irecv(&stamp.time, 1, MPI_DOUBLE, peer(c.peer), c.channel, clocks_, &stamp.request);
      } else {
        stamp.time = sim_.completion(ops_.at(op).second);
        MPI_Isend(&stamp.time, 1, MPI_DOUBLE, peer(c.peer), c.channel, clocks_, &stamp.request);
      }
    }
    return op;
  }
  // Into a gathered operand: each executor's own (a bf16 run's real side gathers in bf16).
  using Starts::start_partial_all_gather;
  OpId start_partial_all_gather(Axis axis, const Gathered& local, const Gathered& out,
                                MatrixDim dim, const SliceSpec& slice) {
    return track(real_.start_partial_all_gather(axis, local.real, out.real, dim, slice),
                 sim_.start_partial_all_gather(axis, local.sim, out.sim, dim, slice));
  }
  // Waiting retires the op, as both executors retire theirs: a run holds only the ops in flight.
  void wait(OpId op) {
    const auto it = ops_.find(op);
    if (it == ops_.end()) return;  // unknown or already waited: returns at once
    real_.wait(it->second.first);
    wait_for_clock(op);
    sim_.wait(it->second.second);
    ops_.erase(it);
  }
  void wait_all() {
    real_.wait_all();
    while (!stamps_.empty()) wait_for_clock(stamps_.begin()->first);
    sim_.wait_all();
    ops_.clear();
  }

  void gemm(double alpha, const Gathered& a, bool transpose_a, const Gathered& b, bool transpose_b,
            double beta, const Mat& c) {
    real_.gemm(alpha, a.real, transpose_a, b.real, transpose_b, beta, c.real);
    sim_.gemm(alpha, a.sim, transpose_a, b.sim, transpose_b, beta, c.sim);
  }

 private:
  OpId track(typename Real::OpId real, SimExecutor::OpId sim) {
    ops_.emplace(next_op_, std::make_pair(real, sim));
    return next_op_++;
  }

  // A pipeline message's emulated time, in flight beside the data.
  struct Stamp {
    double time = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    bool receive = false;
  };
  bool carries_clock(Axis axis) const { return axis == Axis::pp && clocks_ != MPI_COMM_NULL; }
  int peer(int displacement) const { return real_.coord(Axis::pp) + displacement; }
  // Completes op's emulated time message, if it has one: a receive's data lands no earlier.
  void wait_for_clock(OpId op) {
    const auto it = stamps_.find(op);
    if (it == stamps_.end()) return;
    MPI_Wait(&it->second.request, MPI_STATUS_IGNORE);
    if (it->second.receive) sim_.complete_no_earlier(ops_.at(op).second, it->second.time);
    stamps_.erase(it);
  }

  Real& real_;
  SimExecutor sim_;
  OpId next_op_ = 0;
  std::map<OpId, std::pair<typename Real::OpId, SimExecutor::OpId>> ops_;  // in flight
  MPI_Comm clocks_ = MPI_COMM_NULL;
  std::map<OpId, Stamp> stamps_;  // map nodes stay put: MPI holds their addresses
};

}  // namespace meshslice::sim
