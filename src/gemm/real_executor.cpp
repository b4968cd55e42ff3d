#include "gemm/real_executor.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>

#include "comm/partial_collectives.hpp"

namespace meshslice {

namespace {
// A chunk shorter than this starves the BLAS kernel; progress then gets fewer chances instead.
constexpr std::size_t kMinChunkRows = 64;

template <class V>
auto rows_of(const V& m, std::size_t begin, std::size_t end) {
  return Kokkos::subview(m, std::make_pair(begin, end), Kokkos::ALL);
}
}  // namespace

template <class T>
RealExecutor<T>::RealExecutor(const Torus& torus, const CommOptions& comm, int gemm_chunks)
    : torus_(torus), comm_(comm), gemm_chunks_(std::max(1, gemm_chunks)) {}

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
typename RealExecutor<T>::OpId RealExecutor<T>::track(Request request) {
  const OpId id = next_op_++;
  in_flight_.emplace(id, std::move(request));
  return id;
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_partial_all_gather(
    Axis axis, const Mat& local, const Mat& out, MatrixDim dim, const SliceSpec& slice) {
  return track(ipartial_all_gather(torus_.axis(axis), local, out, dim, slice, comm_));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_partial_reduce_scatter(
    Axis axis, const Mat& contribution, const Mat& shard, MatrixDim dim, const SliceSpec& slice) {
  return track(ipartial_reduce_scatter(torus_.axis(axis), contribution, shard, dim, slice, comm_));
}

template <class T>
void RealExecutor<T>::slice(const Mat& x, const Mat& sub, MatrixDim dim, const SliceSpec& spec) {
  slice_into(x, sub, dim, spec);
}

template <class T>
void RealExecutor<T>::unslice(const Mat& sub, const Mat& x, MatrixDim dim,
                              const SliceSpec& spec) {
  unslice_into(sub, x, dim, spec);
}

template <class T>
void RealExecutor<T>::copy(const Mat& from, const Mat& to) {
  Kokkos::deep_copy(to, from);
}

template <class T>
void RealExecutor<T>::zero(const Mat& x) {
  Kokkos::deep_copy(x, T(0));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_all_gather(Axis axis, const Mat& local,
                                                                 const Mat& out, MatrixDim dim) {
  return track(iall_gather(torus_.axis(axis), local, out, dim, comm_));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_reduce_scatter(Axis axis, const Mat& in,
                                                                     const Mat& out,
                                                                     MatrixDim dim) {
  return track(ireduce_scatter(torus_.axis(axis), in, out, dim, comm_));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_broadcast(Axis axis, const Mat& buffer,
                                                                int root) {
  return track(ibroadcast(torus_.axis(axis), buffer, root, comm_));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_reduce(Axis axis, const Mat& in,
                                                             const Mat& out, int root) {
  return track(ireduce(torus_.axis(axis), in, out, root, comm_));
}

template <class T>
typename RealExecutor<T>::OpId RealExecutor<T>::start_shift(Axis axis, const Mat& in,
                                                            const Mat& out, int displacement) {
  return track(ishift(torus_.axis(axis), in, out, displacement, comm_));
}

template <class T>
void RealExecutor<T>::wait(OpId op) {
  auto it = in_flight_.find(op);
  if (it == in_flight_.end()) return;
  it->second.wait();
  in_flight_.erase(it);
}

template <class T>
void RealExecutor<T>::wait_all() {
  for (auto& [id, request] : in_flight_) request.wait();
  in_flight_.clear();
}

template <class T>
void RealExecutor<T>::progress() {
  for (auto& [id, request] : in_flight_) request.test();
}

template <class T>
void RealExecutor<T>::gemm(const Mat& a, bool transpose_a, const Mat& b, bool transpose_b, T beta,
                           const Mat& c) {
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
    if (split_k)
      KokkosBlas::gemm(ta, tb, T(1), rows_of(a, begin, end), rows_of(b, begin, end),
                       begin == 0 ? beta : T(1), c);
    else
      KokkosBlas::gemm(ta, tb, T(1), rows_of(a, begin, end), b, beta, rows_of(c, begin, end));
    if (!in_flight_.empty()) {
      ExecSpace().fence();  // the chunk is done before MPI gets the core
      progress();
    }
  }
}

template class RealExecutor<float>;
template class RealExecutor<double>;

}  // namespace meshslice
