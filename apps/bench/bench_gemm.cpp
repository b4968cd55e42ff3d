// meshslice-bench mode "gemm": distributed GEMM algorithms side by side in one run, with
// ScaLAPACK's p?gemm on the same grid and data, the local-GEMM peak measured on the same local
// shapes, verification against a serial GEMM, and the overlap each algorithm achieved.
#include <KokkosBlas3_gemm.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_gemm_report.hpp"
#include "bench_modes.hpp"
#include "comm/comm_parameters.hpp"
#include "core/csv.hpp"
#include "core/deck.hpp"
#include "core/huge_pages.hpp"
#include "core/log.hpp"
#include "core/memory_check.hpp"
#include "core/output_file.hpp"
#include "core/timing.hpp"
#include "core/trace.hpp"
#include "exec/combined_executor.hpp"
#include "exec/real_executor.hpp"
#include "gemm/gemm_plan.hpp"
#include "gemm/scalapack_gemm.hpp"
#include "gemm/verify.hpp"
#include "mesh/mesh_parameters.hpp"
#include "sim/machine_loader.hpp"

namespace meshslice::bench {

namespace {

const char* kScalapack = "scalapack";

struct GemmSettings {
  std::vector<std::string> algorithms;  // library algorithms plus "scalapack"
  std::vector<Dataflow> flows;
  std::vector<GemmProblem> shapes;  // flow filled per run
  std::vector<int> slices;
  int block;
  std::string precision;
  int warmups;
  int repetitions;
  int gemm_chunks;
  bool verify;
  bool trace;
  std::unique_ptr<hw::MachineModel> machine;  // combined mode: also emulate this machine
};

GemmSettings gemm_settings_from(const Teuchos::ParameterList& deck) {
  GemmSettings s;
  s.algorithms = get_strings(deck, "gemm.algorithms");
  for (const auto& name : s.algorithms) {
    if (name == kScalapack) continue;
    try {
      parse_algorithm(name);
    } catch (const UserError& e) {  // the library's list, and the comparison this app adds
      throw UserError(concat("gemm.algorithms: ", e.what(), ", ", kScalapack));
    }
  }
  for (const auto& name : get_strings(deck, "gemm.dataflows"))
    s.flows.push_back(parse_dataflow(name));
  const auto M = get_ints(deck, "gemm.M"), N = get_ints(deck, "gemm.N"),
             K = get_ints(deck, "gemm.K");
  require(M.size() == N.size() && N.size() == K.size(), "gemm.M, gemm.N and gemm.K list one ",
          "shape per entry and must have the same length; got ", M.size(), ", ", N.size(), ", ",
          K.size());
  for (std::size_t i = 0; i < M.size(); ++i) {
    require(M[i] > 0 && N[i] > 0 && K[i] > 0, "GEMM shape ", i, " (M=", M[i], " N=", N[i],
            " K=", K[i], ") must be positive");
    s.shapes.push_back({Dataflow::OS, std::size_t(M[i]), std::size_t(N[i]), std::size_t(K[i])});
  }
  s.slices = get_ints(deck, "gemm.slices");
  for (int S : s.slices) require(S >= 1, "gemm.slices entries must be >= 1, got ", S);
  s.block = get_param<int>(deck, "gemm.block");
  s.precision = get_param<std::string>(deck, "gemm.precision");
  s.warmups = get_param<int>(deck, "gemm.warmups");
  s.repetitions = get_param<int>(deck, "gemm.repetitions");
  s.gemm_chunks = get_param<int>(deck, "gemm.gemm_chunks");
  s.verify = get_param<bool>(deck, "gemm.verify");
  s.trace = get_param<bool>(deck, "gemm.trace");
  const std::string hardware = get_param<std::string>(deck, "gemm.hardware");
  if (hardware != "none")
    s.machine =
        std::make_unique<hw::MachineModel>(sim::load_machine_model(hardware, "gemm.hardware"));
  for (const auto& [key, empty] :
       {std::pair<const char*, bool>{"gemm.algorithms", s.algorithms.empty()},
        {"gemm.dataflows", s.flows.empty()},
        {"gemm.M, gemm.N and gemm.K", s.shapes.empty()},
        {"gemm.slices", s.slices.empty()}})
    require(!empty, key, " is empty: nothing would be measured; list at least one entry");
  require(s.block >= 1, "gemm.block must be >= 1, got ", s.block);
  require(s.repetitions >= 1, "gemm.repetitions = ", s.repetitions, " must be at least 1");
  // The first run of a plan touches its workspaces and the BLAS's buffers for the first time:
  // timed, it would make the efficiency and the hidden-communication share meaningless.
  require(s.warmups >= 1, "gemm.warmups = ", s.warmups,
          " must be at least 1: the first run "
          "pays first-touch costs that the efficiency and overlap ratios must not include");
  require(s.gemm_chunks >= 1, "gemm.gemm_chunks must be >= 1, got ", s.gemm_chunks);
  return s;
}

// The local GEMM each chip performs in total (all slices/steps together), as one call:
// C(m x n) = op(A)(m x k) op(B)(k x n). Its rate is the "local peak" the algorithm is held to.
struct LocalWork {
  std::size_t m, k, n;
  bool transpose_a, transpose_b;
};

LocalWork local_work(Algorithm algorithm, const GemmProblem& p, int rows, int cols) {
  // The stationary matrix's shard (the same size on every chip) fixes two of the sizes; the
  // moving operands are gathered whole along the third.
  const auto shard = [&](char matrix) {
    return shard_region(algorithm, p, matrix, rows, cols, 0, 0);
  };
  switch (p.flow) {
    case Dataflow::LS: {
      const ShardRegion a = shard('A');  // M x K
      return {a.rows, a.cols, p.N, false, true};
    }
    case Dataflow::RS: {
      const ShardRegion b = shard('B');  // K x N
      return {p.M, b.rows, b.cols, true, false};
    }
    case Dataflow::OS: break;
  }
  const ShardRegion c = shard('C');  // M x N
  return {c.rows, p.K, c.cols, false, false};
}

// The chip's whole local GEMM as one KokkosBlas::gemm call, timed alongside each algorithm.
template <class T>
class LocalPeak {
 public:
  explicit LocalPeak(const LocalWork& w)
      : w_(w),
        a_(huge_page_matrix<T>("peak_a", w.transpose_a ? w.k : w.m, w.transpose_a ? w.m : w.k)),
        b_(huge_page_matrix<T>("peak_b", w.transpose_b ? w.n : w.k, w.transpose_b ? w.k : w.n)),
        c_(huge_page_matrix<T>("peak_c", w.m, w.n)) {
    Kokkos::deep_copy(a_, T(0.5));
    Kokkos::deep_copy(b_, T(0.25));
    Kokkos::deep_copy(c_, T(0));
  }
  void run() const {
    KokkosBlas::gemm(w_.transpose_a ? "T" : "N", w_.transpose_b ? "T" : "N", T(1), a_, b_, T(0),
                     c_);
    ExecSpace().fence();
  }
  // The same GEMM as `pieces` BLAS calls cut the way MeshSlice slices the dataflow (OS: K, each
  // call accumulating into all of C; LS: N; RS: M), each piece's operands contiguous as MeshSlice
  // packs them: what the BLAS itself does with the calls MeshSlice's local GEMMs make, the
  // ceiling of their efficiency. The pieces are the buffers' own memory seen in the piece's shape
  // (every element holds the same value, so only the shapes matter).
  void run_sliced(Dataflow flow, std::size_t pieces) const {
    // A Matrix over a raw pointer does not own it (as matrix_rows' placeholders), and keeps the
    // operands of one type for KokkosBlas::gemm.
    const auto piece = [](const Matrix<T>& x, std::size_t s, std::size_t rows, std::size_t cols) {
      return Matrix<T>(x.data() + s * rows * cols, rows, cols);
    };
    const char* ta = w_.transpose_a ? "T" : "N";
    const char* tb = w_.transpose_b ? "T" : "N";
    for (std::size_t s = 0; s < pieces; ++s) {
      switch (flow) {
        case Dataflow::OS:  // A: m x k, B: k x n
          KokkosBlas::gemm(ta, tb, T(1), piece(a_, s, w_.m, w_.k / pieces),
                           piece(b_, s, w_.k / pieces, w_.n), T(s == 0 ? 0 : 1), c_);
          break;
        case Dataflow::LS:  // A: m x k, B: n x k (transposed)
          KokkosBlas::gemm(ta, tb, T(1), a_, piece(b_, s, w_.n / pieces, w_.k), T(0),
                           piece(c_, s, w_.m, w_.n / pieces));
          break;
        case Dataflow::RS:  // A: k x m (transposed), B: k x n
          KokkosBlas::gemm(ta, tb, T(1), piece(a_, s, w_.k, w_.m / pieces), b_, T(0),
                           piece(c_, s, w_.m / pieces, w_.n));
          break;
      }
    }
    ExecSpace().fence();
  }
  double flops() const { return 2.0 * w_.m * w_.n * w_.k; }

 private:
  LocalWork w_;
  Matrix<T> a_, b_, c_;
};

double mean_over(MPI_Comm comm, double value) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, comm);
  return value / size;
}

// One configuration (algorithm, S) of a shape: its operands, plans and samples. Each
// repetition times the algorithm's steps without arithmetic, the chip's local GEMM alone and the
// algorithm itself (traced), a moment apart. The configurations of a shape are measured
// interleaved, one repetition of each in turn (measure_shape), so that the drift of a shared,
// noisy machine spreads over all of them alike and the ratios between them compare runs made
// moments apart.
template <class T>
class Configuration {
 public:
  Configuration(const std::string& name, const GemmProblem& p, int slices, const GemmSettings& s,
                const Torus& torus, const CommOptions& comm)
      : name_(name),
        p_(p),
        slices_(slices),
        s_(s),
        torus_(torus),
        comm_(comm),
        scalapack_(name == kScalapack),
        algorithm_(scalapack_ ? Algorithm::meshslice : parse_algorithm(name)),
        group_(torus.axis(Axis::tp).comm()),
        peak_(local_work(algorithm_, p, torus.size(Axis::row), torus.size(Axis::col))) {
    auto region = [&](char m) {
      return shard_region(algorithm_, p, m, torus.size(Axis::row), torus.size(Axis::col),
                          torus.coord(Axis::row), torus.coord(Axis::col));
    };
    const ShardRegion ra = region('A'), rb = region('B'), rc = region('C');
    // Allocated like a plan's buffers (huge-page advice before the first touch), so the local
    // peak, the operands and the workspaces live on the same kind of pages.
    a_ = huge_page_matrix<T>("a", ra.rows, ra.cols);
    b_ = huge_page_matrix<T>("b", rb.rows, rb.cols);
    c_ = huge_page_matrix<T>("c", rc.rows, rc.cols);
    Kokkos::deep_copy(c_, T(0));
    fill_gemm_operands(algorithm_, p, torus, a_, b_);
    if (scalapack_) {
      grid_ = std::make_unique<ScalapackGrid>(torus);
      return;
    }
    // One executor and plan untraced, one traced (tracing adds a fence per op); both planned
    // here, so the timed runs allocate nothing.
    const GemmOptions options{slices, s.block};
    plain_ex_ = std::make_unique<RealExecutor<T>>(torus, comm, s.gemm_chunks);
    traced_ex_ = std::make_unique<RealExecutor<T>>(torus, comm, s.gemm_chunks, &trace_);
    plain_ = std::make_unique<Plan>(*plain_ex_, algorithm_, p, options);
    traced_ = std::make_unique<Plan>(*traced_ex_, algorithm_, p, options);
  }

  void warm_up() {
    for (int i = 0; i < s_.warmups; ++i) {
      peak_.run();
      if (sliced()) run_sliced_blas();
      run(false);
      // The timed runs use the traced plan, whose buffers are first touched by its first run:
      // unwarmed, the first repetition of every configuration ran about 1.5x slower (4096^3 on
      // the 2-core development VM: 1.03-1.10 s against 0.68-0.74 s).
      if (!scalapack_) run(true);
    }
  }

  void measure() {
    // Communication alone first: it leaves C garbage, which the real run then overwrites.
    if (!scalapack_) comm_alone_.push_back(timed(group_, [&] { run(false, false); }));
    peak_seconds_.push_back(timed(group_, [&] { peak_.run(); }));
    if (sliced()) sliced_seconds_.push_back(timed(group_, [&] { run_sliced_blas(); }));
    trace_.clear();
    seconds_.push_back(timed(group_, [&] { run(!scalapack_); }));
    blas_seconds_.push_back(blas_);
    outside_gemm_.push_back(seconds_.back() - blas_);  // progress work inside GEMMs counts here
  }

  Result finish(const std::string& out_dir) {
    Result r{name_, p_.flow, p_, slices_};
    r.seconds = median(seconds_);
    r.min_seconds = *std::min_element(seconds_.begin(), seconds_.end());
    r.gflops = 2.0 * p_.M * p_.N * p_.K / r.seconds / 1e9;
    r.peak_gflops = peak_.flops() / median(peak_seconds_) / 1e9;
    if (!scalapack_) {
      const double alone = median(comm_alone_);
      const double outside = mean_over(group_, median(outside_gemm_));
      r.hidden = alone > 0 ? std::clamp(1.0 - outside / alone, 0.0, 1.0) : 0.0;
      r.local_gemm_efficiency = mean_over(group_, median(peak_seconds_) / median(blas_seconds_));
      if (sliced())
        r.sliced_blas_efficiency =
            mean_over(group_, median(peak_seconds_) / median(sliced_seconds_));
      if (s_.trace) write_trace(out_dir);
    }
    if (s_.machine && !scalapack_) r.emulated_seconds = emulated_seconds();
    if (s_.verify) r.error = max_relative_error(algorithm_, p_, torus_, c_);
    return r;
  }

 private:
  using Plan = GemmPlan<RealExecutor<T>>;

  // MeshSlice with more than one slice: its local GEMMs are the sliced BLAS calls timed alone.
  bool sliced() const { return algorithm_ == Algorithm::meshslice && !scalapack_ && slices_ > 1; }
  void run_sliced_blas() const { peak_.run_sliced(p_.flow, slices_); }

  void run(bool traced_run, bool compute = true) {
    if (scalapack_) {
      scalapack_gemm(*grid_, p_.flow, p_.M, p_.N, p_.K, a_, b_, c_);
    } else {
      RealExecutor<T>& ex = traced_run ? *traced_ex_ : *plain_ex_;
      const double before = ex.blas_seconds();
      ex.set_compute_enabled(compute);
      (traced_run ? *traced_ : *plain_).run(a_, b_, c_);
      ex.wait_all();
      ex.set_compute_enabled(true);
      blas_ = ex.blas_seconds() - before;
    }
    ExecSpace().fence();
  }

  // The last repetition's trace, as Chrome JSON for every rank and rank 0's text timeline.
  void write_trace(const std::string& out_dir) const {
    const std::string stem =
        concat(out_dir, "/trace-", name_, "-", dataflow_name(p_.flow), "-", torus_.size(Axis::row),
               "x", torus_.size(Axis::col), "-M", p_.M, "N", p_.N, "K", p_.K, "-S", slices_);
    write_chrome_trace(trace_, stem + ".json", group_);
    if (torus_.rank() == 0) {
      write_output_file(stem + ".txt",
                        "# rank 0: start, end, lane, op, bytes\n" + trace_.text_timeline());
    }
  }

  // Combined mode: the same ops once more, each also timed on the emulated machine.
  double emulated_seconds() {
    RealExecutor<T> real(torus_, comm_, s_.gemm_chunks);
    sim::CombinedExecutor<RealExecutor<T>> ex(real, *s_.machine);
    GemmPlan<sim::CombinedExecutor<RealExecutor<T>>>(ex, algorithm_, p_,
                                                     GemmOptions{slices_, s_.block})
        .run(ex.wrap(a_), ex.wrap(b_), ex.wrap(c_));
    ex.wait_all();
    double emulated = ex.emulated().totals().seconds;
    MPI_Allreduce(MPI_IN_PLACE, &emulated, 1, MPI_DOUBLE, MPI_MAX, group_);
    return emulated;
  }

  std::string name_;
  GemmProblem p_;
  int slices_;
  const GemmSettings& s_;
  const Torus& torus_;
  CommOptions comm_;
  bool scalapack_;
  Algorithm algorithm_;
  MPI_Comm group_;
  LocalPeak<T> peak_;
  Matrix<T> a_, b_, c_;
  std::unique_ptr<ScalapackGrid> grid_;
  Trace trace_;
  std::unique_ptr<RealExecutor<T>> plain_ex_, traced_ex_;
  std::unique_ptr<Plan> plain_, traced_;
  double blas_ = 0;  // seconds in local BLAS calls during the last run
  std::vector<double> seconds_, peak_seconds_, sliced_seconds_, blas_seconds_, outside_gemm_,
      comm_alone_;
};

// Why a configuration cannot overlap communication with computation, or "" if it can.
std::string no_overlap_reason(const std::string& name, int slices, const GemmSettings& s) {
  if (name == kScalapack) return "ScaLAPACK's p?gemm is timed as a black box (no trace)";
  if (name == "collective")
    return "Collective runs each collective as a whole before/after the GEMM";
  if (name == "meshslice" && slices == 1) return "S=1 leaves one slice: nothing to pipeline";
  if (s.gemm_chunks == 1) return "gemm.gemm_chunks=1: MPI is not progressed during GEMMs";
  return "";
}

// Slice counts worth measuring for an algorithm: S means nothing to some of them.
std::vector<int> slices_for(const std::string& name, const GemmSettings& s) {
  if (name == "meshslice" || name == "summa") return s.slices;
  return {1};
}

// Every configuration of one shape, measured interleaved (see Configuration). Configurations an
// algorithm cannot run are skipped with the reason, on every rank alike (the checks run before
// any message).
template <class T>
std::vector<Result> measure_shape(const GemmProblem& shape, const GemmSettings& s,
                                  const Torus& torus, const CommOptions& comm,
                                  const std::string& out_dir) {
  std::vector<std::unique_ptr<Configuration<T>>> configurations;
  for (const auto& name : s.algorithms)
    for (int slices : slices_for(name, s)) {
      const std::string why = no_overlap_reason(name, slices, s);
      log_info(shape.str(), " ", name, " S=", slices,
               why.empty() ? "" : " (no overlap: " + why + ")");
      try {
        configurations.push_back(
            std::make_unique<Configuration<T>>(name, shape, slices, s, torus, comm));
      } catch (const UserError& e) {
        log_info("  skipped: ", e.what());
      }
    }
  for (auto& c : configurations) c->warm_up();
  // Each round starts one configuration further on, so that no configuration always runs in the
  // same place, after the same neighbour (whatever a run leaves behind in caches, TLBs and the
  // allocator falls on each configuration in turn, not always on the one after it).
  const std::size_t n = configurations.size();
  for (int rep = 0; rep < s.repetitions; ++rep)
    for (std::size_t i = 0; i < n; ++i) configurations[(i + rep) % n]->measure();
  std::vector<Result> results;
  for (auto& c : configurations) results.push_back(c->finish(out_dir));
  return results;
}

}  // namespace

void add_gemm_parameters(Teuchos::ParameterList& valid) {
  auto& g = valid.sublist("gemm", false, "mode gemm: distributed GEMMs side by side");
  const std::vector<std::string> algorithms = {"meshslice", "collective", kScalapack};
  g.set("algorithms", Teuchos::Array<std::string>(algorithms.begin(), algorithms.end()),
        "algorithms: meshslice, collective, summa, cannon, wang, 1dtp, fsdp, scalapack");
  const std::vector<std::string> flows = {"os"};
  g.set("dataflows", Teuchos::Array<std::string>(flows.begin(), flows.end()),
        "dataflows: os (C=AB), ls (C=AB^T), rs (C=A^TB)");
  auto ints = [](std::vector<int> v) { return Teuchos::Array<int>(v.begin(), v.end()); };
  g.set("M", ints({4096, 8192}), "rows of C, one entry per shape");
  g.set("N", ints({4096, 3072}), "columns of C, one entry per shape");
  g.set("K", ints({4096, 1024}), "inner dimension, one entry per shape");
  g.set("slices", ints({1, 2, 4, 8}), "MeshSlice slice counts S to try");
  g.set("block", 8, "block size B of the blocked slicing (paper Alg. 2)");
  set_choice(g, "precision", "float", {"float", "double"}, "element type");
  g.set("warmups", 1, "untimed runs per configuration (at least 1: first-touch costs)");
  g.set("repetitions", 5,
        "timed runs per configuration, interleaved with the other configurations of the shape "
        "(median and fastest reported)");
  g.set("gemm_chunks", 8, RealExecutor<float>::gemm_chunks_help());
  g.set("verify", true, "check every result against a serial GEMM of the same global data");
  g.set("trace", true, "write a Chrome trace (Perfetto) of each configuration to --out");
  g.set("hardware", std::string("none"),
        "combined mode: also time every configuration's ops on an emulated machine, a name "
        "under hardware/machines/ (tpuv4-sim, tpuv4-cloud) or a path; none = off");
}

int run_gemm_bench(AppContext& context) {
  const GemmSettings s = gemm_settings_from(context.deck);
  const Torus torus(MPI_COMM_WORLD, mesh_shape_from(context.deck, context.size));
  require(torus.size(Axis::dp) == 1 && torus.size(Axis::pp) == 1,
          "mode gemm runs on one tensor-parallel group: set mesh.dp = mesh.pp = 1");
  const CommOptions comm = comm_options_from(context.deck);
  const int rows = torus.size(Axis::row), cols = torus.size(Axis::col);
  const bool single = s.precision == "float";
  log_info("GEMMs on a ", rows, "x", cols, " mesh, ", s.precision, ", ", s.repetitions,
           " repetitions, collectives: ", impl_name(comm.impl));

  std::unique_ptr<CsvWriter> csv;
  if (context.rank == 0)
    csv = std::make_unique<CsvWriter>(
        context.out_dir + "/gemm.csv",
        std::vector<std::string>{"algorithm", "dataflow", "rows", "cols", "M", "N", "K", "S",
                                 "seconds", "gflops", "local_peak_gflops", "efficiency",
                                 "hidden_comm_fraction", "local_gemm_efficiency", "max_rel_error",
                                 "emulated_seconds", "seconds_min", "sliced_blas_efficiency"});
  // A shape's configurations are all alive at once (measured interleaved): at least their A, B
  // and C shards must fit, before anything is allocated.
  std::size_t configurations = 0;
  for (const auto& name : s.algorithms) configurations += slices_for(name, s).size();
  for (const GemmProblem& shape : s.shapes) {
    const double elements =
        (double(shape.M) * shape.K + double(shape.K) * shape.N + double(shape.M) * shape.N) /
        (rows * cols);
    require_memory_fits(concat("the ", configurations, " configurations of M=", shape.M,
                               " N=", shape.N, " K=", shape.K, " (their A, B and C shards alone)"),
                        configurations * elements * (single ? sizeof(float) : sizeof(double)),
                        torus.comm());
  }
  std::vector<Result> results;
  for (Dataflow flow : s.flows)
    for (GemmProblem shape : s.shapes) {
      shape.flow = flow;
      const std::vector<Result> measured =
          single ? measure_shape<float>(shape, s, torus, comm, context.out_dir)
                 : measure_shape<double>(shape, s, torus, comm, context.out_dir);
      for (const Result& r : measured) {
        results.push_back(r);
        if (csv)
          csv->row(r.algorithm, dataflow_name(flow), rows, cols, shape.M, shape.N, shape.K,
                   r.slices, r.seconds, r.gflops, r.peak_gflops,
                   r.gflops / (r.peak_gflops * rows * cols), r.hidden, r.local_gemm_efficiency,
                   r.error, r.emulated_seconds, r.min_seconds, r.sliced_blas_efficiency);
      }
    }

  require(!results.empty(), "every configuration was skipped (the reasons are above): nothing "
                            "was measured; choose sizes that the mesh, S and B divide");
  if (csv) csv->finish();
  if (context.rank == 0) print_gemm_report(results, rows, cols);
  return 0;
}

}  // namespace meshslice::bench
