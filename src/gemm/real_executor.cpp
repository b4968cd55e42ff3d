#include "gemm/real_executor.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>

#include "comm/partial_collectives.hpp"

namespace meshslice {

namespace {
// A chunk shorter than this starves the BLAS kernel; progress then gets fewer chances instead.
constexpr std::size_t kMinChunkRows = 64;

TraceLane lane_of(Axis axis) {
  switch (axis) {
    case Axis::row: return TraceLane::row_links;
    case Axis::col: return TraceLane::col_links;
    case Axis::tp: return TraceLane::tp_links;
    default: return TraceLane::other;
  }
}

template <class V>
double bytes_of(const V& m) {
  return static_cast<double>(m.size() * sizeof(typename V::value_type));
}

template <class V>
auto rows_of(const V& m, std::size_t begin, std::size_t end) {
  return Kokkos::subview(m, std::make_pair(begin, end), Kokkos::ALL);
}
}  // namespace

template <class T>
RealExecutor<T>::RealExecutor(const Torus& torus, const CommOptions& comm, int gemm_chunks,
                              Trace* trace)
    : torus_(torus), comm_(comm), gemm_chunks_(std::max(1, gemm_chunks)), trace_(trace) {}

template <class T>
RealExecutor<T>::~RealExecutor() {
  wait_all();
}

template <class T>
typename RealExecutor<T>::Mat RealExecutor<T>::alloc(std::size_t rows, std::size_t cols,
                                                     const char* label) const {
  return Mat(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, cols);
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::track(Request request, const char* name,
                                                      Axis axis, double bytes) {
  const OpId id = next_op_++;
  TraceEvent event{name, lane_of(axis), trace_ ? trace_->now() : 0.0, 0.0, bytes, 0.0};
  in_flight_.emplace(id, InFlight{std::move(request), std::move(event)});
  return id;
}

template <class T>
void RealExecutor<T>::finish(InFlight& op) {
  if (!trace_) return;
  op.event.end = trace_->now();
  trace_->add(op.event);
}

template <class T>
template <class F>
void RealExecutor<T>::traced(const char* name, TraceLane lane, double flops, F&& work) {
  const double start = trace_ ? trace_->now() : 0.0;
  work();
  if (trace_) {
    ExecSpace().fence();  // time the work, not its launch
    trace_->add(TraceEvent{name, lane, start, trace_->now(), 0.0, flops});
  }
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_partial_all_gather(
    Axis axis, const Mat& local, const Mat& out, MatrixDim dim, const SliceSpec& slice) {
  const double bytes = (torus_.size(axis) - 1) * bytes_of(local) / slice.count;
  return track(ipartial_all_gather(torus_.axis(axis), local, out, dim, slice, comm_),
               "partial_all_gather", axis, bytes);
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_partial_reduce_scatter(
    Axis axis, const Mat& contribution, const Mat& shard, MatrixDim dim, const SliceSpec& slice) {
  const double bytes = (torus_.size(axis) - 1) * bytes_of(shard) / slice.count;
  return track(ipartial_reduce_scatter(torus_.axis(axis), contribution, shard, dim, slice, comm_),
               "partial_reduce_scatter", axis, bytes);
}

template <class T>
void RealExecutor<T>::slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec) {
  traced("slice", TraceLane::local, 0, [&] { slice_into(x, sub, dim, spec); });
}

template <class T>
void RealExecutor<T>::unslice(const Mat& sub, const Mat& x, MatrixDim dim,
                              const SliceSpec& spec) {
  traced("unslice", TraceLane::local, 0, [&] { unslice_into(sub, x, dim, spec); });
}

template <class T>
void RealExecutor<T>::copy(const Mat& from, const Mat& to) {
  traced("copy", TraceLane::local, 0, [&] { Kokkos::deep_copy(to, from); });
}

template <class T>
void RealExecutor<T>::zero(const Mat& x) {
  traced("zero", TraceLane::local, 0, [&] { Kokkos::deep_copy(x, T(0)); });
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_all_gather(Axis axis, const Mat& local,
                                                                 const Mat& out, MatrixDim dim) {
  return track(iall_gather(torus_.axis(axis), local, out, dim, comm_), "all_gather", axis,
               (torus_.size(axis) - 1) * bytes_of(local));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_reduce_scatter(Axis axis, const Mat& in,
                                                                     const Mat& out,
                                                                     MatrixDim dim) {
  return track(ireduce_scatter(torus_.axis(axis), in, out, dim, comm_), "reduce_scatter", axis,
               (torus_.size(axis) - 1) * bytes_of(out));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_broadcast(Axis axis, const Mat& buffer,
                                                                int root) {
  return track(ibroadcast(torus_.axis(axis), buffer, root, comm_), "broadcast", axis,
               bytes_of(buffer));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_reduce(Axis axis, const Mat& in,
                                                             const Mat& out, int root) {
  return track(ireduce(torus_.axis(axis), in, out, root, comm_), "reduce", axis, bytes_of(in));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_shift(Axis axis, const Mat& in,
                                                            const Mat& out, int displacement) {
  return track(ishift(torus_.axis(axis), in, out, displacement, comm_), "shift", axis,
               bytes_of(in));
}

template <class T>
void RealExecutor<T>::wait(OpId op) {
  auto it = in_flight_.find(op);
  if (it == in_flight_.end()) return;
  it->second.request.wait();
  finish(it->second);
  in_flight_.erase(it);
}

template <class T>
void RealExecutor<T>::wait_all() {
  for (auto& [id, op] : in_flight_) {
    op.request.wait();
    finish(op);
  }
  in_flight_.clear();
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
void RealExecutor<T>::gemm(const Mat& a, bool transpose_a, const Mat& b, bool transpose_b, T beta,
                           const Mat& c) {
  if (!compute_enabled_) return;
  const double inner = transpose_a ? a.extent(0) : a.extent(1);
  traced("gemm", TraceLane::compute, 2.0 * c.extent(0) * c.extent(1) * inner,
         [&] { chunked_gemm(a, transpose_a, b, transpose_b, beta, c); });
}

template <class T>
void RealExecutor<T>::chunked_gemm(const Mat& a, bool transpose_a, const Mat& b,
                                   bool transpose_b, T beta, const Mat& c) {
  const char* ta = transpose_a ? "T" : "N";
  const char* tb = transpose_b ? "T" : "N";
  // Chunk along a dimension whose pieces stay contiguous row blocks: the rows of C (and A) when
  // A is not transposed, else the inner dimension K (rows of A and of B) with accumulation.
  const bool split_k = transpose_a;
  const std::size_t extent = split_k ? a.extent(0) : c.extent(0);
  const std::size_t chunks = in_flight_.empty() ? 1 : static_cast<std::size_t>(gemm_chunks_);
  const std::size_t step = std::max(kMinChunkRows, (extent + chunks - 1) / chunks);
  if (split_k && transpose_b) {  // no contiguous split; never used by the algorithms
    KokkosBlas::gemm(ta, tb, T(1), a, b, beta, c);
    return;
  }
  for (std::size_t begin = 0; begin < extent; begin += step) {
    const std::size_t end = std::min(extent, begin + step);
    const double start = MPI_Wtime();
    if (split_k)
      KokkosBlas::gemm(ta, tb, T(1), rows_of(a, begin, end), rows_of(b, begin, end),
                       begin == 0 ? beta : T(1), c);
    else
      KokkosBlas::gemm(ta, tb, T(1), rows_of(a, begin, end), b, beta, rows_of(c, begin, end));
    ExecSpace().fence();  // the chunk is done before MPI gets the core (and before the clock)
    blas_seconds_ += MPI_Wtime() - start;
    if (!in_flight_.empty()) progress();
  }
}

template class RealExecutor<float>;
template class RealExecutor<double>;

}  // namespace meshslice
