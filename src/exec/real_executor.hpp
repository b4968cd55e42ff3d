#pragma once
// The real executor: runs a distributed GEMM algorithm's steps on Kokkos views with MPI.
//
// Algorithms (gemm/meshslice.hpp & co.) are templates over an executor; this one moves real
// data, the emulating executor of the hardware model times the same steps without data.
// Communication overlaps computation for real: MPI progresses a non-blocking collective only
// inside MPI calls, so gemm() runs the local product in row chunks and tests every in-flight
// collective between chunks.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/comm_options.hpp"
#include "comm/comm_scratch.hpp"
#include "comm/request.hpp"
#include "comm/slicing.hpp"
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "core/trace.hpp"
#include "exec/caller_work.hpp"
#include "exec/executor_interface.hpp"
#include "exec/gemm_operand.hpp"
#include "exec/local_gemm_bf16.hpp"
#include "exec/local_gemm_tf32.hpp"
#include "exec/scratch_pool.hpp"
#include "exec/starts_collectives.hpp"
#include "exec/training_executor.hpp"
#include "exec/workspace.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

TraceLane lane_of(Axis axis);  // the trace lane of a ring's links

template <class T>
class RealExecutor : public StartsCollectives<RealExecutor<T>, Matrix<T>> {
  using Starts = StartsCollectives<RealExecutor<T>, Matrix<T>>;

 public:
  using Scalar = T;
  using Mat = Matrix<T>;
  // What a partial all-gather fills for a GEMM: in a bf16 run the gathered slice in bf16.
  using Gathered = GemmOperand<T>;
  using OpId = std::size_t;
  using Workspace = meshslice::Workspace<Mat, CommScratch<T, MemSpace>>;
  static constexpr bool holds_data = true;  // its matrices have memory (exec/null_executor.hpp)

  // `gemm_chunks`: how many pieces a local GEMM is cut into to progress communication while
  // anything is in flight (1 turns the progress calls off; the local GEMM then runs as one BLAS
  // call), each piece at least kDefaultMinChunkRows rows (set_min_chunk_rows). `trace`, when
  // given, records every op of this executor.
  RealExecutor(const Torus& torus, const CommOptions& comm, int gemm_chunks = 8,
               Trace* trace = nullptr);
  ~RealExecutor();
  RealExecutor(const RealExecutor&) = delete;
  RealExecutor& operator=(const RealExecutor&) = delete;

  // The fewest rows of C (or of K) a chunk of a GEMM gets; progress then gets fewer chances
  // instead. Every chunk packs the whole other operand again, and on a CPU core packing moves
  // about ten times fewer bytes per second than the multiply does flops, so a chunk of r rows
  // costs about 20/r more than its share of one call (float; measured on this project's 2-core
  // node: 8 chunks of 256 rows made MeshSlice's local GEMMs 9% slower at S = 8, and Collective,
  // which never has anything in flight, paid none of it). 1024 rows keep that near 2%. Tests
  // lower it to cut their small matrices into pieces.
  static constexpr std::size_t kDefaultMinChunkRows = 1024;
  // What the apps' deck key gemm_chunks means, for their --help.
  static std::string gemm_chunks_help() {
    return concat("pieces a local GEMM is cut into to progress communication during it (each at "
                  "least ",
                  kDefaultMinChunkRows,
                  " rows: every piece packs the other operand "
                  "again)");
  }
  void set_min_chunk_rows(std::size_t rows) { min_chunk_rows_ = std::max<std::size_t>(1, rows); }
  // Test aid: the collective this executor would start as its n-th (0 = the first started for
  // real; a plan's rehearsal starts none) throws std::runtime_error instead, as a bug inside a
  // plan's run would, with others possibly in flight and the peers waiting in theirs. The tests
  // check that such an error ends the whole job (meshslice-train's debug.fail_at_collective).
  void fail_at_collective(std::size_t n) { fail_at_collective_ = n; }

  int mesh_rows() const { return torus_.size(Axis::row); }
  int mesh_cols() const { return torus_.size(Axis::col); }
  int coord(Axis axis) const { return torus_.coord(axis); }
  int size(Axis axis) const { return torus_.size(axis); }
  const Torus& torus() const { return torus_; }
  // Whether MPI reads host mirrors of the data (comm/comm_scratch.hpp's mpi_staged): what the
  // caller's own exchanges (model/ re-layouts) must do too.
  bool staged() const { return staged_; }
  // The instance local GEMMs run on: callers queue their own kernels (the training step's norms,
  // attention, activations) here so they stay ordered with the GEMMs around them.
  const ExecSpace& compute_space() const { return compute_; }
  // What a caller written over any executor (model/transformer.hpp) needs to run on this one as
  // on sim::CombinedExecutor: the executor that moves the data, and a shard in this executor's
  // matrix type (here the shard itself).
  RealExecutor& real() { return *this; }
  const Mat& wrap(const Mat& m) const { return m; }

  // Buffers (see exec/executor_interface.hpp for the workspace protocol).
  Mat alloc(std::size_t rows, std::size_t cols, const char* label);
  // A partial all-gather's output for a GEMM: a matrix, or in a bf16 run a bf16 one (in the
  // memory of half as many elements of T, so the plan's workspace keeps one element type).
  Gathered alloc_gathered(std::size_t rows, std::size_t cols, const char* label);
  // The matrix a GEMM operand is, for the algorithms that move float matrices only (SUMMA,
  // Cannon, Wang, 1D TP, FSDP): a bf16 operand is a logic error there.
  Mat matrix_of(const Gathered& g) const {
    MESHSLICE_ASSERT(!g.in_bf16(), "RealExecutor: a bf16 operand given to an algorithm that moves "
                                   "float matrices (MeshSlice and one chip's GEMM take them)");
    return g.value;
  }
  Mat placeholder(std::size_t rows, std::size_t cols) const {
    return Mat(static_cast<T*>(nullptr), rows, cols);
  }
  void use_workspace(Workspace* workspace) {
    workspace_ = workspace;
    planned_ = planned_ || workspace;
    rehearsed_.clear();
  }

  Mat rows(const Mat& x, std::size_t first, std::size_t count) const {
    return matrix_rows(x, first, count);
  }

  // Local data movement (the hardware model times these as HBM traffic).
  void slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec);
  void unslice(const Mat& sub, const Mat& x, MatrixDim dim, const SliceSpec& spec, double beta = 0);
  void copy(const Mat& from, const Mat& to);
  void zero(const Mat& x);
  void scale(const Mat& x, double factor);  // x *= factor

  // Starts `c` over MPI (comm/collective.hpp for shapes and semantics).
  OpId start(const Collective<Mat>& c);
  // The partial all-gather of a GEMM operand into one: into a bf16 one it gathers in bf16 (a
  // float sub-shard rounded as it is sliced, a bf16 one as it is; half the bytes on the links);
  // a matrix into a matrix as any other collective.
  using Starts::start_partial_all_gather;
  OpId start_partial_all_gather(Axis axis, const Gathered& local, const Gathered& out,
                                MatrixDim dim, const SliceSpec& slice);
  void wait(OpId op);  // that op only; an unknown or finished op returns at once
  void wait_all();     // everything in flight, including what the caller started
  // Whether `op` was started and its completion has not been observed yet.
  bool pending(OpId op) const { return in_flight_.count(op) != 0; }

  // Communication-only mode: gemm() skips the arithmetic (C is left unchanged) and only
  // completes the steps' bookkeeping. The bench uses it to time the algorithm's communication
  // alone, the yardstick for how much of it the real run hid behind GEMMs.
  void set_compute_enabled(bool enabled) { compute_enabled_ = enabled; }

  // Seconds spent inside the local BLAS calls alone, without the MPI progress work done between
  // chunks: the measure of how efficient the sliced local GEMMs themselves are.
  double blas_seconds() const { return blas_seconds_; }
  // The FLOPs (2 m n k) of those calls: with blas_seconds(), the rate the run's own GEMMs reach.
  double blas_flops() const { return blas_flops_; }

  // The caller's own work, recorded in the trace like the executor's ops: kernels queued on
  // compute_space() (the training step's norms, attention, activations) and blocking
  // communication over a ring (its re-layouts and small all-reduces), each with what it costs
  // (exec/caller_work.hpp). Nothing runs while a workspace is rehearsing.
  template <class F>
  void compute(const char* name, const LocalWork& cost, F&& work) {
    traced(name, TraceLane::compute, cost.flops(), 0.0, work);
  }
  template <class F>
  void communicate(const char* name, Axis axis, const CommWork& cost, F&& work) {
    traced(name, lane_of(axis), 0.0, cost.elements * sizeof(T), work);
  }

  // work() as a named span of the caller's program (a training step's forward pass) on the
  // trace's phase lane.
  template <class F>
  void phase(const char* name, F&& work) {
    if (trace_)
      trace_->span(name, TraceLane::phase, work);
    else
      work();
  }

  // C = alpha op(A) op(B) + beta C, progressing in-flight collectives between chunks. A and B
  // are matrices or gathered operands (a bf16 one is multiplied as it is).
  void gemm(double alpha, const Gathered& a, bool transpose_a, const Gathered& b, bool transpose_b,
            double beta, const Mat& c);

  // train.precision bf16 (a float executor only): from now on every GEMM rounds its operands to
  // bf16 and multiplies them by `route` (exec/local_gemm_bf16.hpp), the products summed in
  // float, as PyTorch's autocast does, and the sliced gathers move bf16 (alloc_gathered). The
  // bf16 copies live in scratch sized as the plans are made (their rehearsals, and
  // reserve_rounding for the callers' operands that arrive in float); a GEMM outside a plan
  // grows it. Chosen before any plan is made on this executor (its buffers depend on it).
  void round_gemm_operands_to_bf16(Bf16GemmRoute route);
  // train.precision tf32 (a float executor of a CUDA build only): from now on every GEMM runs on
  // the tensor cores in TF32 (exec/local_gemm_tf32.hpp); UserError in other builds.
  void multiply_gemms_in_tf32();
  // m as the operand of the GEMMs that follow (an FC layer's output gradient: its weight and data
  // GEMMs both read it): in a bf16 run rounded to bf16 once, here, into scratch that the next
  // call overwrites, instead of by each GEMM; otherwise m itself.
  Gathered shared_operand(const Mat& m);
  // Sizes shared_operand()'s scratch for a rows x cols matrix now (an FC layer's plans are made),
  // so that a step does not grow it: freeing the smaller one would wait for the whole device.
  void reserve_shared_operand(std::size_t rows, std::size_t cols);
  // Sizes the scratch that rounds a GEMM's operands a and b for operands of up to a_elements and
  // b_elements in float (GemmPlan::reserve_rounding), so that a step does not grow it.
  void reserve_rounding(std::size_t a_elements, std::size_t b_elements);
  // Host staging for `count` sends or receives of up to `elements` each in flight at once,
  // started without a plan (the pipeline's messages), made now where MPI is staged through host
  // mirrors, so that no step allocates it; returns the bytes made.
  std::size_t reserve_messages(std::size_t count, std::size_t elements);
  // Whether GEMM operands may be kept in bf16 (the caller's too: FF2's saved input): a bf16 run.
  bool keeps_operands_in_bf16() const { return bf16_route_.has_value(); }
  const Gathered& wrap_operand(const Gathered& g) const { return g; }
  // Bytes of the bf16 operand copies (and the route's own buffers) at this point: none until the
  // first GEMM, then the largest operands seen.
  std::size_t bf16_scratch_bytes() const {
    return (bf16_a_.extent(0) + bf16_b_.extent(0) + bf16_shared_.extent(0)) * sizeof(bfloat16) +
           (bf16_gemm_ ? bf16_gemm_->buffer_bytes() : 0);
  }
  // How many times that scratch (or the bf16 GEMM) was made or grown: once the plans are made,
  // a step that changes it allocated (and fenced) in the step.
  std::size_t bf16_scratch_made() const { return bf16_scratch_made_; }

 private:
  struct InFlight {
    Request request;
    TraceEvent event;                         // completed with the time the completion was observed
    std::optional<std::size_t> staging_slot;  // its area of unplanned_staging_, if it holds one
  };
  bool rehearsing() const { return workspace_ && workspace_->rehearsing(); }
  // Starts a collective over `axis` whose elements are U and which needs `need` of them in
  // scratch: launch(ring, scratch) starts it. The scratch comes from the plan's workspace (in
  // elements of T); without one, host staging alone comes from unplanned_staging_, and device
  // scratch is left for the collective to allocate.
  template <class U, class Launch>
  OpId start_op(const char* name, CommKind kind, Axis axis, std::size_t shard_elements,
                const ScratchNeed& need, Launch&& launch);
  void progress();
  // An area of unplanned_staging_ of at least `host` elements of T, held until released.
  std::size_t acquire_staging(std::size_t host);
  // multiply(a part, b part, beta, c part) over chunks of the GEMM: rows of C, or of the inner
  // dimension when A is transposed.
  template <class Operand, class Multiply>
  void chunked_gemm(const Operand& a, bool transpose_a, const Operand& b, bool transpose_b, T beta,
                    const Mat& c, Multiply&& multiply);
  // The operands in bf16: as they are if they are, else rounded in scratch that grows to fit
  // them.
  std::pair<Matrix<bfloat16>, Matrix<bfloat16>> bf16_operands(const Gathered& a, const Gathered& b);
  // scratch, or a new one when it holds fewer than `elements` (the GEMMs queued on the old one
  // finish first).
  void grow_bf16_scratch(Kokkos::View<bfloat16*, MemSpace>& scratch, std::size_t elements,
                         const char* label);
  // The bf16 GEMM, remade when it does not fit operands of these sizes.
  void fit_bf16_gemm(std::size_t a_elements, std::size_t b_elements);
  void rehearse_gemm(const Gathered& a, const Gathered& b);
  // An op left flight: its staging area is free again, its trace event ends.
  void finish(InFlight& op);
  template <class F>
  void traced(const char* name, TraceLane lane, double flops, double bytes, F&& work) {
    if (rehearsing()) return;
    const ProfilingRegion region(std::string("meshslice::") + name);
    const double start = trace_ ? trace_->now() : 0.0;
    work();
    if (trace_) {
      fence(compute_, "meshslice::trace");  // time the work, not its launch
      trace_->add(TraceEvent{name, lane, start, trace_->now(), bytes, flops});
    }
  }

  const Torus& torus_;
  CommOptions comm_;
  bool staged_;  // MPI goes through host mirrors (device memory, MPI not GPU-aware)
  int gemm_chunks_;
  std::size_t min_chunk_rows_ = kDefaultMinChunkRows;
  OpId next_op_ = 0;
  std::size_t started_ = 0;  // collectives started for real (not rehearsed)
  std::size_t fail_at_collective_ = std::numeric_limits<std::size_t>::max();
  Trace* trace_;
  Workspace* workspace_ = nullptr;
  bool compute_enabled_ = true;
  bool planned_ = false;  // a plan's workspace was attached: its buffers are laid out
  double blas_seconds_ = 0;
  double blas_flops_ = 0;
  // Local GEMMs and data movement run on compute_, the collectives' packing and unpacking
  // kernels on comm_space_ (separate streams on a GPU, so packing overlaps the GEMMs).
  ExecSpace compute_;
  ExecSpace comm_space_;
  std::optional<Bf16GemmRoute> bf16_route_;            // set: GEMM operands rounded to bf16
  Kokkos::View<bfloat16*, MemSpace> bf16_a_, bf16_b_;  // operands rounded for a GEMM
  Kokkos::View<bfloat16*, MemSpace> bf16_shared_;      // shared_operand()'s
  std::unique_ptr<LocalGemmBf16> bf16_gemm_;
  std::size_t bf16_scratch_made_ = 0;         // bf16_scratch_made()
  std::unique_ptr<LocalGemmTf32> tf32_gemm_;  // set: GEMMs in TF32 (float executors only)
  std::map<OpId, InFlight> in_flight_;
  // The ops started on a ring of several ranks and not yet waited for, in the program's order
  // whether or not they have completed: what decides how a local GEMM is chunked.
  std::set<OpId> unwaited_;
  // Host staging of collectives started without a workspace (the pipeline stages' sends and
  // receives): made by reserve_messages() (the trainer's, for every message buffer), else on
  // first need, and kept, an area reused once the op that held it completed.
  // Allocating and freeing a host mirror per message (page-locked on a GPU) cost a free that
  // fences every instance, in every step.
  ScratchPool<CommScratch<T, MemSpace>> unplanned_staging_;
  std::map<OpId, std::size_t> rehearsed_;  // rehearsing: op -> workspace scratch slot it holds
};

static_assert(is_executor_v<RealExecutor<float>> && is_executor_v<RealExecutor<double>>);
static_assert(is_training_executor_v<RealExecutor<float>> &&
              is_training_executor_v<RealExecutor<double>>);

}  // namespace meshslice
