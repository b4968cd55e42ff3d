#pragma once
// The emulating executor: runs a distributed GEMM algorithm (gemm/*.hpp, through run_gemm) on
// data-free matrices and advances virtual clocks with the hardware model (hardware/), so one
// process can time a 256- or 4096-chip torus.
//
// It emulates one chip of the mesh, the "representative": in a symmetric SPMD algorithm every
// chip runs the same timeline (see sim/emulate.hpp for the asymmetric ones). The chip has
// independent engines, each with its own clock:
//   compute          the cores: GEMMs and local copies (slice, unslice, copy, zero)
//   row, col links   the rings of mesh dimension 0 (Axis::row) and 1 (Axis::col); the two
//                    directions of the mesh communicate in parallel
//   tp links         the 1D ring through all chips (1D TP, FSDP)
//   dp, pp links     data-parallel collectives and pipeline-stage sends (the machine's dp/pp
//                    links)
// each ring with one engine per direction of travel (the paper's simulator has one NIC
// controller per ICI link; a machine whose rings are used one way, ici.ring_directions 1, has
// one engine per ring, which opposite shifts share): a shift, send or receive occupies the
// direction its data travels (a shift the shorter way round, halfway round the way asked; what
// goes to or comes from the next chip travels forward), and a ring collective, which streams
// both ways, occupies both. Besides the engines, the issuing
// thread has its clock. An operation starts when the thread issues it, its engines are free (a
// direction carries one operation at a time, in issue order) and its inputs are ready; its
// output becomes ready when it ends. GEMMs and local copies are synchronous for the thread, as
// they are for RealExecutor; collectives are not: wait() moves the thread's clock to the op's
// end. So communication overlaps computation exactly where the algorithm's dependencies allow.
//
// With the machine's nic_hbm_contention, a GEMM gets only the HBM bandwidth that the
// communication overlapping it leaves over (the NIC reads and writes HBM directly).
#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "comm/slicing.hpp"
#include "core/trace.hpp"
#include "exec/caller_work.hpp"
#include "exec/executor_interface.hpp"
#include "exec/starts_collectives.hpp"
#include "exec/workspace.hpp"
#include "hardware/model.hpp"
#include "mesh/torus.hpp"

namespace meshslice::sim {

// A matrix without data: its shape, and when its latest write completes. Copies share that
// time, as copies of a Kokkos view share the data; so do views of some of its rows (rows()),
// for the whole buffer: a write to any part of it counts as a write to all of it.
class SimMat {
 public:
  SimMat() = default;
  SimMat(std::size_t rows, std::size_t cols)
      : rows_(rows), cols_(cols), ready_(std::make_shared<double>(0.0)) {}
  std::size_t extent(std::size_t dim) const { return ready_ ? (dim == 0 ? rows_ : cols_) : 0; }
  std::size_t size() const { return extent(0) * extent(1); }
  double ready() const { return ready_ ? *ready_ : 0.0; }
  void mark_written(double time) const {
    if (ready_ && time > *ready_) *ready_ = time;
  }
  // Rows [first, first + count), sharing this matrix's write time.
  SimMat rows(std::size_t first, std::size_t count) const {
    if (!ready_ || first + count > rows_)
      throw std::logic_error("SimMat::rows: rows past the end of a matrix");
    SimMat view = *this;
    view.rows_ = count;
    return view;
  }

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::shared_ptr<double> ready_;
};

// What the emulated chip did, in seconds. Communication times are totals over all operations,
// overlapped or not (paper Fig. 10 puts them next to the compute time).
struct SimTotals {
  double seconds = 0;   // wall time: from the first op's issue to the last op's end
  double compute = 0;   // GEMMs
  double local = 0;     // local copies through HBM
  double launch = 0;    // communication: operation launch overheads
  double sync = 0;      //                per-step synchronizations
  double transfer = 0;  //                shard transfers
  double flops = 0;     // useful GEMM flops on this chip
  int collectives = 0;  // communication operations started
  // Bytes of every buffer the chip allocated (operands, the algorithm's gather and partial-output
  // buffers): what must fit its HBM at once. Summing totals keeps the largest.
  double memory_bytes = 0;
  double communication() const { return launch + sync + transfer; }
  // Time the cores were idle: communication (or its dependencies) not hidden behind work.
  double exposed() const { return seconds - compute - local; }
  SimTotals& operator+=(const SimTotals& o);
};

class SimExecutor : public StartsCollectives<SimExecutor, SimMat> {
 public:
  using Mat = SimMat;
  using OpId = std::size_t;
  using Workspace = meshslice::Workspace<SimMat, NoScratch>;

  // Emulates chip (row, col) of a rows x cols torus of `machine`'s chips. With `events`, every
  // op is also recorded there (lanes and names as RealExecutor's trace).
  SimExecutor(const hw::MachineModel& machine, int rows, int cols, int row = 0, int col = 0,
              std::vector<TraceEvent>* events = nullptr);

  // The chip's place on the data- and pipeline-parallel axes (both of size 1 by default).
  void set_outer_axes(int dp, int dp_coord, int pp, int pp_coord);

  int mesh_rows() const { return rows_; }
  int mesh_cols() const { return cols_; }
  int coord(Axis axis) const;
  int size(Axis axis) const;

  Mat alloc(std::size_t rows, std::size_t cols, const char* label);
  Mat placeholder(std::size_t rows, std::size_t cols) const { return Mat(rows, cols); }
  // While a rehearsing workspace is attached nothing is timed (exec/executor_interface.hpp).
  void use_workspace(Workspace* workspace) { workspace_ = workspace; }
  Mat rows(const Mat& x, std::size_t first, std::size_t count) const {
    return x.rows(first, count);
  }

  void slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec);
  void unslice(const Mat& sub, const Mat& x, MatrixDim dim, const SliceSpec& spec, double beta = 0);
  void copy(const Mat& from, const Mat& to);
  void zero(const Mat& x);
  void scale(const Mat& x, double factor);

  // Costs `c` on the interconnect model (exec/collective_cost.hpp). A partial collective moves
  // sub-shard s of the shard; packing its blocks is left to the NIC's DMA (strided reads of
  // whole B-blocks), so it adds HBM traffic but no core time. The pipeline is symmetric: a send
  // and a receive each take one pp-link transfer.
  OpId start(const Collective<Mat>& c);
  // Waiting retires an op (its completion time is no longer kept, so a run of any length holds
  // only the ops in flight); an unknown or retired op returns at once, as RealExecutor's does.
  void wait(OpId op);
  void wait_all();

  void gemm(double alpha, const Mat& a, bool transpose_a, const Mat& b, bool transpose_b,
            double beta, const Mat& c);

  // A caller's own work (exec/caller_work.hpp), as sim::CombinedExecutor passes it on: local
  // work runs on the cores, its GEMMs on the matrix units one after another and its element
  // traffic through HBM; a blocking collective occupies the axis's ring and the thread waits for
  // it.
  void local_work(const char* name, const LocalWork& work);
  void blocking_communication(const char* name, Axis axis, const CommWork& work);

  double now() const { return clock_; }  // the issuing thread's clock
  // Moves the issuing thread's clock to `time` if that is later (an emulated barrier).
  void advance_to(double time) { clock_ = std::max(clock_, time); }
  // When op `op` (in flight) completes on the emulated chip; a receive can be told that its data
  // lands no earlier than `time` (the sender's emulated clock carried along:
  // exec/combined_executor.hpp).
  double completion(OpId op) const;
  void complete_no_earlier(OpId op, double time);
  // Totals so far; `seconds` is the latest end of anything issued (call wait_all() first to
  // include the thread waiting for it).
  SimTotals totals() const;

 private:
  // The cores, then each ring's forward and backward direction: 1 + 2 axis + direction.
  static constexpr int compute_engine = 0, ring_count = 5, engine_count = 1 + 2 * ring_count;
  // The directions an operation's data travels in.
  enum class Travel { forward, backward, both };
  struct NicActivity {
    double start, end;
    double rate;  // HBM bytes/s the NIC moves meanwhile
  };

  bool rehearsing() const { return workspace_ && workspace_->rehearsing(); }
  // The engine of `axis`'s ring for travel forward (0) or backward (1); on a machine whose rings
  // are used one way (ici.ring_directions 1), both travel on the forward one.
  int engine_of(Axis axis, int direction) const;
  // The direction a shift of `displacement` on a ring of `chips` takes: the shorter way round,
  // the way asked when both are as short.
  static Travel shift_travel(int chips, int displacement);
  hw::Ring ring_of(Axis axis) const;
  double element_bytes() const { return machine_.machine.chip.element_bytes; }
  OpId communicate(const char* name, Axis axis, const hw::CommCost& cost, const Mat& in,
                   const Mat& out, double bytes_sent, Travel travel = Travel::both);
  // The directions `c`'s data travels in: a send to the next chip travels forward, and so does
  // a receive from the previous one (the data comes the same way).
  Travel travel(const Collective<Mat>& c) const;
  // A synchronous copy on the cores from `in` (if any) into `out`.
  void local_copy(const char* name, const Mat* in, const Mat& out, double bytes_read,
                  double bytes_written);
  // HBM bandwidth left to the cores over [start, start + duration).
  double core_bandwidth(double start, double duration);
  // A local GEMM starting at `start`, slowed by the NIC where the machine says it contends.
  hw::GemmTiming time_gemm(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                           double start);
  void record(const char* name, TraceLane lane, double start, double end, double bytes,
              double flops);

  const hw::MachineModel& machine_;
  int rows_, cols_, row_, col_;
  int dp_ = 1, dp_coord_ = 0, pp_ = 1, pp_coord_ = 0;
  std::vector<TraceEvent>* events_;
  Workspace* workspace_ = nullptr;
  double clock_ = 0;
  double engine_free_[engine_count] = {};
  OpId issue(double end);  // a new op in flight, ending at `end`
  OpId next_op_ = 0;
  std::map<OpId, double> in_flight_;  // op -> when it completes, until waited
  // Per ring engine, its operations' NIC activity in time order (a direction runs one at a
  // time; an operation using both directions is kept with the forward one).
  std::deque<NicActivity> nic_[engine_count];
  SimTotals totals_;
};

static_assert(is_executor_v<SimExecutor>);

}  // namespace meshslice::sim
