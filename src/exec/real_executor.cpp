#include "exec/real_executor.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/huge_pages.hpp"
#include "core/kokkos_compat.hpp"
#include "core/stream_copy.hpp"

namespace meshslice {

TraceLane lane_of(Axis axis) {
  switch (axis) {
    case Axis::row: return TraceLane::row_links;
    case Axis::col: return TraceLane::col_links;
    case Axis::tp: return TraceLane::tp_links;
    case Axis::dp: return TraceLane::dp_links;
    case Axis::pp: return TraceLane::pp_links;
  }
  return TraceLane::other;
}

namespace {

template <class V>
auto rows_of(const V& m, std::size_t begin, std::size_t end) {
  return Kokkos::subview(m, std::make_pair(begin, end), Kokkos::ALL);
}
}  // namespace

template <class T>
RealExecutor<T>::RealExecutor(const Torus& torus, const CommOptions& comm, int gemm_chunks,
                              Trace* trace)
    : torus_(torus),
      comm_(comm),
      staged_(mpi_staged<MemSpace>(comm)),
      gemm_chunks_(std::max(1, gemm_chunks)),
      trace_(trace) {
  std::tie(compute_, comm_space_) = two_instances<ExecSpace>();
}

template <class T>
RealExecutor<T>::~RealExecutor() {
  if (std::uncaught_exceptions() == 0) {
    wait_all();
    return;
  }
  // Unwinding from an error (a throw inside a plan's run): the peers may never complete what is
  // in flight, so waiting here would turn the error into a hang. The exception goes on to the
  // app's error path, which ends the job with MPI_Abort; until then MPI may still write into the
  // buffers the requests hold, so they are deliberately leaked rather than freed.
  new std::map<OpId, InFlight>(std::move(in_flight_));
}

template <class T>
typename RealExecutor<T>::Mat RealExecutor<T>::alloc(std::size_t rows, std::size_t cols,
                                                     const char* label) {
  auto make = [&] { return huge_page_matrix<T>(label, rows, cols); };
  return workspace_ ? workspace_->buffer(rows, cols, make) : make();
}

template <class T>
typename RealExecutor<T>::Gathered RealExecutor<T>::alloc_gathered(std::size_t rows,
                                                                   std::size_t cols,
                                                                   const char* label) {
  if (!bf16_route_) return alloc(rows, cols, label);
  Gathered g;
  g.value = alloc(1, elements_holding<T, bfloat16>(rows * cols), label);
  g.rounded = Matrix<bfloat16>(reinterpret_cast<bfloat16*>(g.value.data()), rows, cols);
  return g;
}

// Fences the local instance first (MPI may read what its kernels wrote). While rehearsing, only
// reserves the collective's scratch in the workspace.
template <class T>
template <class U, class Launch>
typename RealExecutor<T>::OpId RealExecutor<T>::start_op(const char* name, CommKind kind, Axis axis,
                                                         std::size_t shard_elements,
                                                         const ScratchNeed& need, Launch&& launch) {
  const OpId id = next_op_++;
  const AxisComm& ring = torus_.axis(axis);
  if (!rehearsing() && started_++ == fail_at_collective_)
    throw std::runtime_error(concat("debug.fail_at_collective: collective ", fail_at_collective_,
                                    " of this rank (", name, " on the '", ring.name(),
                                    "' axis) failed on purpose"));
  // The collective's scratch comes from the plan's workspace when one is attached (none: the
  // collective allocates), and its packing kernels run on the communication instance.
  CommScratch<U, MemSpace> s;
  std::optional<std::size_t> staging_slot;
  if (workspace_) {
    const ScratchNeed want{elements_holding<T, U>(need.device), elements_holding<T, U>(need.host)};
    auto fits = [&](const CommScratch<T, MemSpace>& have) {
      return have.device.extent(0) >= want.device && have.host.extent(0) >= want.host;
    };
    auto make = [&] { return make_scratch<T, MemSpace>(want, "meshslice_collective_scratch"); };
    const auto [slot, scratch] = workspace_->scratch(make, fits);
    if (rehearsing()) {
      rehearsed_[id] = slot;  // untracked: complete at once, its scratch held until waited for
      return id;
    }
    s = scratch_viewed_as<U>(scratch);
  } else if (need.device == 0 && need.host > 0) {
    staging_slot = acquire_staging(elements_holding<T, U>(need.host));
    s = scratch_viewed_as<U>(unplanned_staging_[*staging_slot]);
  }
  s.space = comm_space_;
  fence(compute_, "meshslice::before_mpi");  // MPI may read what local kernels just wrote
  const double bytes = bytes_sent(kind, ring.size(), double(shard_elements * sizeof(U)));
  TraceEvent event{name, lane_of(axis), trace_ ? trace_->now() : 0.0, 0.0, bytes, 0.0};
  in_flight_.emplace(id, InFlight{launch(ring, s), std::move(event), staging_slot});
  if (ring.size() > 1) unwaited_.insert(id);  // a one-rank ring's op completes as it starts
  return id;
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start(const Collective<Mat>& c) {
  return start_op<T>(c.name(), c.kind, c.axis, c.shard_elements(),
                     scratch_need(c, torus_.axis(c.axis).size(), comm_, staged_, sizeof(T)),
                     [&](const AxisComm& ring, const CommScratch<T, MemSpace>& s) {
                       return start_collective(c, ring, comm_, s);
                     });
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_partial_all_gather(
    Axis axis, const Gathered& local, const Gathered& out, MatrixDim dim, const SliceSpec& slice) {
  if (!out.in_bf16())
    return Starts::start_partial_all_gather(axis, matrix_of(local), out.value, dim, slice);
  if constexpr (std::is_same_v<T, float>) {
    const std::size_t shard = local.extent(0) * local.extent(1) / slice.count;
    const ScratchNeed need = scratch_need(CommKind::all_gather, true, torus_.axis(axis).size(),
                                          shard, dim, comm_, staged_, sizeof(bfloat16));
    return start_op<bfloat16>(
        partial_comm_kind_name(CommKind::all_gather), CommKind::all_gather, axis, shard, need,
        [&](const AxisComm& ring, const CommScratch<bfloat16, MemSpace>& s) {
          if (local.in_bf16())
            return ipartial_all_gather(ring, local.rounded, out.rounded, dim, slice, comm_, s);
          return ipartial_all_gather_rounded(ring, local.value, out.rounded, dim, slice, comm_, s);
        });
  } else {
    MESHSLICE_ASSERT(false, "RealExecutor: a bf16 gather outside a bf16 run");
    return 0;
  }
}

template <class T>
std::size_t RealExecutor<T>::acquire_staging(std::size_t host) {
  return unplanned_staging_.acquire(
      [&] {
        return make_scratch<T, MemSpace>(ScratchNeed{0, host}, "meshslice_unplanned_staging");
      },
      [&](const CommScratch<T, MemSpace>& have) { return have.host.extent(0) >= host; });
}

template <class T>
std::size_t RealExecutor<T>::reserve_messages(std::size_t count, std::size_t elements) {
  const std::size_t host = point_to_point_scratch(elements, staged_).host;
  if (host == 0) return 0;
  const std::size_t had = unplanned_staging_.areas().size();
  std::vector<std::size_t> slots;
  for (std::size_t i = 0; i < count; ++i) slots.push_back(acquire_staging(host));
  for (const std::size_t slot : slots) unplanned_staging_.release(slot);
  return (unplanned_staging_.areas().size() - had) * host * sizeof(T);
}

template <class T>
void RealExecutor<T>::finish(InFlight& op) {
  if (op.staging_slot) unplanned_staging_.release(*op.staging_slot);
  if (!trace_) return;
  op.event.end = trace_->now();
  trace_->add(op.event);
}

template <class T>
void RealExecutor<T>::slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec) {
  traced("slice", TraceLane::local, 0, 0, [&] { slice_into(x, sub, dim, spec, compute_); });
}

template <class T>
void RealExecutor<T>::unslice(const Mat& sub, const Mat& x, MatrixDim dim, const SliceSpec& spec,
                              double beta) {
  traced("unslice", TraceLane::local, 0, 0,
         [&] { unslice_into(sub, x, dim, spec, static_cast<T>(beta), compute_); });
}

template <class T>
void RealExecutor<T>::copy(const Mat& from, const Mat& to) {
  traced("copy", TraceLane::local, 0, 0, [&] { large_copy(compute_, to, from); });
}

template <class T>
void RealExecutor<T>::zero(const Mat& x) {
  traced("zero", TraceLane::local, 0, 0, [&] { Kokkos::deep_copy(compute_, x, T(0)); });
}

template <class T>
void RealExecutor<T>::scale(const Mat& x, double factor) {
  traced("scale", TraceLane::local, 0, 0, [&] {
    const T f = static_cast<T>(factor);
    // Columns innermost on every backend (a GPU's default iterates rows fastest).
    using Policy =
        Kokkos::MDRangePolicy<ExecSpace,
                              Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
    Kokkos::parallel_for(
        "meshslice::scale", Policy(compute_, {0, 0}, {x.extent(0), x.extent(1)}),
        KOKKOS_LAMBDA(const std::size_t i, const std::size_t j) { x(i, j) *= f; });
  });
}

template <class T>
void RealExecutor<T>::wait(OpId op) {
  if (rehearsing()) {  // the op's scratch may serve the next collective
    auto r = rehearsed_.find(op);
    if (r != rehearsed_.end()) {
      workspace_->release(r->second);
      rehearsed_.erase(r);
    }
    return;
  }
  unwaited_.erase(op);
  auto it = in_flight_.find(op);
  if (it == in_flight_.end()) return;
  it->second.request.wait();
  finish(it->second);
  in_flight_.erase(it);
}

template <class T>
void RealExecutor<T>::wait_all() {
  if (rehearsing()) {
    for (const auto& [id, slot] : rehearsed_) workspace_->release(slot);
    rehearsed_.clear();
  }
  for (auto& [id, op] : in_flight_) {
    op.request.wait();
    finish(op);
  }
  in_flight_.clear();
  unwaited_.clear();
}

template <class T>
void RealExecutor<T>::progress() {
  // Completed ops leave the map here, so their trace events end when the completion was seen.
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.request.test()) {
      finish(it->second);
      it = in_flight_.erase(it);
    } else {
      ++it;
    }
  }
}

template <class T>
void RealExecutor<T>::gemm(double alpha, const Gathered& a, bool transpose_a, const Gathered& b,
                           bool transpose_b, double beta, const Mat& c) {
  if (rehearsing()) return rehearse_gemm(a, b);
  if (!compute_enabled_) return;
  const double inner = transpose_a ? a.extent(0) : a.extent(1);
  const double flops = 2.0 * c.extent(0) * c.extent(1) * inner;
  blas_flops_ += flops;
  traced("gemm", TraceLane::compute, flops, 0.0, [&] {
    const char* ta = transpose_a ? "T" : "N";
    const char* tb = transpose_b ? "T" : "N";
    const T scale = static_cast<T>(alpha);
    if constexpr (std::is_same_v<T, float>) {
      if (bf16_route_) {
        const auto [a16, b16] = bf16_operands(a, b);
        chunked_gemm(a16, transpose_a, b16, transpose_b, static_cast<T>(beta), c,
                     [&](const auto& ap, const auto& bp, T beta_part, const auto& cp) {
                       bf16_gemm_->run(compute_, transpose_a, transpose_b, scale, ap, bp, beta_part,
                                       cp);
                     });
        return;
      }
    }
    MESHSLICE_ASSERT(!a.in_bf16() && !b.in_bf16(),
                     "RealExecutor: a bf16 operand outside a bf16 run");
    chunked_gemm(a.value, transpose_a, b.value, transpose_b, static_cast<T>(beta), c,
                 [&](const auto& ap, const auto& bp, T beta_part, const auto& cp) {
                   if constexpr (std::is_same_v<T, float>) {
                     if (tf32_gemm_) {
                       tf32_gemm_->run(compute_, transpose_a, transpose_b, scale, ap, bp, beta_part,
                                       cp);
                       return;
                     }
                   }
                   blas_gemm(compute_, ta, tb, scale, ap, bp, beta_part, cp);
                 });
  });
}

template <class T>
typename RealExecutor<T>::Gathered RealExecutor<T>::shared_operand(const Mat& m) {
  if constexpr (std::is_same_v<T, float>) {
    if (!bf16_route_ || !compute_enabled_ || rehearsing()) return m;
    grow_bf16_scratch(bf16_shared_, elements(m), "bf16_shared");
    Gathered g;
    g.rounded = Matrix<bfloat16>(bf16_shared_.data(), m.extent(0), m.extent(1));
    traced("to_bfloat16", TraceLane::compute, 0.0, 0.0,
           [&] { to_bfloat16(compute_, m, g.rounded, Mat(), Matrix<bfloat16>()); });
    return g;
  } else {
    return m;  // bf16 GEMMs need float storage
  }
}

template <class T>
void RealExecutor<T>::reserve_shared_operand(std::size_t rows, std::size_t cols) {
  if (bf16_route_) grow_bf16_scratch(bf16_shared_, rows * cols, "bf16_shared");
}

template <class T>
void RealExecutor<T>::reserve_rounding(std::size_t a_elements, std::size_t b_elements) {
  if (!bf16_route_) return;
  grow_bf16_scratch(bf16_a_, a_elements, "bf16_a");
  grow_bf16_scratch(bf16_b_, b_elements, "bf16_b");
}

// A bf16 run's GEMM rehearsed by a plan: what its runs need is made now. The bf16 GEMM fits the
// operands; one in float that the plan made (a buffer of the algorithms that move float
// matrices) gets its rounding scratch; the caller's (a placeholder) is noted for
// GemmPlan::reserve_rounding, whose caller knows whether it will arrive in bf16.
template <class T>
void RealExecutor<T>::rehearse_gemm(const Gathered& a, const Gathered& b) {
  if (!bf16_route_) return;
  const Gathered* operands[2] = {&a, &b};
  std::size_t own[2] = {0, 0};  // elements of the plan's own buffers in float, to round
  for (int which = 0; which < 2; ++which) {
    const Gathered& g = *operands[which];
    const std::size_t n = g.extent(0) * g.extent(1);
    if (g.in_bf16()) continue;
    if (g.value.data() == nullptr)
      workspace_->note_operand_as_given(which, n);
    else
      own[which] = n;
  }
  reserve_rounding(own[0], own[1]);
  fit_bf16_gemm(a.extent(0) * a.extent(1), b.extent(0) * b.extent(1));
}

template <class T>
void RealExecutor<T>::fit_bf16_gemm(std::size_t a_elements, std::size_t b_elements) {
  if (bf16_gemm_ && bf16_gemm_->fits(a_elements, b_elements)) return;
  fence(compute_, "meshslice::bf16_scratch");  // GEMMs queued on the old buffers finish first
  // Grown to the largest operands seen so far, so alternating shapes do not remake it.
  const std::size_t had_a = bf16_gemm_ ? bf16_gemm_->a_elements() : 0;
  const std::size_t had_b = bf16_gemm_ ? bf16_gemm_->b_elements() : 0;
  bf16_gemm_ = std::make_unique<LocalGemmBf16>(*bf16_route_, std::max(a_elements, had_a),
                                               std::max(b_elements, had_b));
  ++bf16_scratch_made_;
}

template <class T>
void RealExecutor<T>::grow_bf16_scratch(Kokkos::View<bfloat16*, MemSpace>& scratch,
                                        std::size_t elements, const char* label) {
  if (elements <= scratch.extent(0)) return;
  fence(compute_, "meshslice::bf16_scratch");  // GEMMs queued on the old scratch finish first
  scratch = Kokkos::View<bfloat16*, MemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), elements);
  ++bf16_scratch_made_;
}

template <class T>
void RealExecutor<T>::round_gemm_operands_to_bf16(Bf16GemmRoute route) {
  require(std::is_same_v<T, float>,
          "bf16 GEMM operands need float storage: train.precision bf16 keeps its tensors in float");
  require(bf16_route_available(route), "the bf16 GEMM route ", bf16_route_name(route),
          " is not in this build");
  MESHSLICE_ASSERT(!planned_, "RealExecutor: bf16 GEMMs chosen after a plan was made (its "
                              "gathers' buffers are float)");
  bf16_route_ = route;
  bf16_gemm_.reset();
}

template <class T>
void RealExecutor<T>::multiply_gemms_in_tf32() {
  require(std::is_same_v<T, float>, "TF32 GEMMs need float storage: train.precision tf32 keeps "
                                    "its tensors in float");
  require(!bf16_route_, "GEMMs in TF32 and in bf16 at once: choose one train.precision");
  tf32_gemm_ = std::make_unique<LocalGemmTf32>();
}

template <class T>
std::pair<Matrix<bfloat16>, Matrix<bfloat16>> RealExecutor<T>::bf16_operands(const Gathered& a,
                                                                             const Gathered& b) {
  const std::size_t na = a.extent(0) * a.extent(1), nb = b.extent(0) * b.extent(1);
  // Scratch for the operands still in float only (a gathered one arrived in bf16).
  const bool round_a = !a.in_bf16(), round_b = !b.in_bf16();
  grow_bf16_scratch(bf16_a_, round_a ? na : 0, "bf16_a");
  grow_bf16_scratch(bf16_b_, round_b ? nb : 0, "bf16_b");
  fit_bf16_gemm(na, nb);
  const Matrix<bfloat16> a16 =
      a.in_bf16() ? a.rounded : Matrix<bfloat16>(bf16_a_.data(), a.extent(0), a.extent(1));
  const Matrix<bfloat16> b16 =
      b.in_bf16() ? b.rounded : Matrix<bfloat16>(bf16_b_.data(), b.extent(0), b.extent(1));
  if constexpr (std::is_same_v<T, float>) {
    // Only the operands still in float are rounded; an empty pair is skipped.
    const Mat a_from = round_a ? a.value : Mat(), b_from = round_b ? b.value : Mat();
    const Matrix<bfloat16> a_to = round_a ? a16 : Matrix<bfloat16>();
    const Matrix<bfloat16> b_to = round_b ? b16 : Matrix<bfloat16>();
    if (round_a || round_b) to_bfloat16(compute_, a_from, a_to, b_from, b_to);
  }
  return {a16, b16};
}

template <class T>
template <class Operand, class Multiply>
void RealExecutor<T>::chunked_gemm(const Operand& a, bool transpose_a, const Operand& b,
                                   bool transpose_b, T beta, const Mat& c, Multiply&& multiply) {
  // Chunk along a dimension whose pieces stay contiguous row blocks: the rows of C (and A) when
  // A is not transposed, else the inner dimension K (rows of A and of B) with accumulation.
  const bool split_k = transpose_a;
  const std::size_t extent = split_k ? a.extent(0) : c.extent(0);
  // Chunks (each with a fence) while a collective started on a ring of several ranks is not yet
  // waited for, to progress it between them. Chosen by the program's order, not by whether the
  // collective has completed by now: that is timing, and a GEMM split along K adds its chunks'
  // products in another order than one call, so a run's last bits changed from run to run
  // (bench-lm's losses in the 9th digit; the same with one chunk). Progress only where
  // something is still in flight.
  if (!in_flight_.empty()) progress();
  const std::size_t chunks = unwaited_.empty() ? 1 : static_cast<std::size_t>(gemm_chunks_);
  const std::size_t step = std::max(min_chunk_rows_, (extent + chunks - 1) / chunks);
  if (split_k && transpose_b) {  // no contiguous split; never used by the algorithms
    multiply(a, b, beta, c);
    return;
  }
  for (std::size_t begin = 0; begin < extent; begin += step) {
    const std::size_t end = std::min(extent, begin + step);
    const double start = MPI_Wtime();
    if (split_k)
      multiply(rows_of(a, begin, end), rows_of(b, begin, end), begin == 0 ? beta : T(1), c);
    else
      multiply(rows_of(a, begin, end), b, beta, rows_of(c, begin, end));
    // The chunk is done before MPI gets the core (and before the clock).
    fence(compute_, "meshslice::gemm_chunk");
    blas_seconds_ += MPI_Wtime() - start;
    if (!in_flight_.empty()) progress();
  }
}

template class RealExecutor<float>;
template class RealExecutor<double>;

}  // namespace meshslice
