#include "comm/block_transpose.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "comm/mpi_datatype.hpp"
#include "comm/recorded_op.hpp"
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"

namespace meshslice {
namespace {

struct Range {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end > begin ? end - begin : 0; }
};

Range block_range(std::size_t extent, int parts, int index) {
  const std::size_t b = extent / static_cast<std::size_t>(parts);
  return {b * static_cast<std::size_t>(index), b * static_cast<std::size_t>(index + 1)};
}

Range intersect(Range a, Range b) { return {std::max(a.begin, b.begin), std::min(a.end, b.end)}; }

}  // namespace

template <class T>
typename BlockTranspose<T>::Plan BlockTranspose<T>::plan(std::size_t rows, std::size_t cols, int pr,
                                                         int pc, int me_i, int me_j) {
  const std::size_t lcm_parts = static_cast<std::size_t>(std::lcm(pr, pc));
  require(rows % static_cast<std::size_t>(pr) == 0 && rows % static_cast<std::size_t>(pc) == 0 &&
              cols % static_cast<std::size_t>(pr) == 0 && cols % static_cast<std::size_t>(pc) == 0,
          "re-layout of a ", rows, " x ", cols, " matrix on a ", pr, " x ", pc,
          " mesh: both dimensions must split evenly over the mesh rows and the mesh columns (",
          "choose sizes divisible by ", lcm_parts, ", or a plan without W-stationary layers)");
  const int p = pr * pc;
  Plan plan;
  plan.sends.resize(p);
  plan.receives.resize(p);
  // Input block of chip (a, b): rows block a of R over Pr, cols block b of C over Pc. Output
  // block of chip (c, d) (C x R matrix): its rows are input columns block c of C over Pr, its
  // columns input rows block d of R over Pc.
  const Range my_rows = block_range(rows, pr, me_i), my_cols = block_range(cols, pc, me_j);
  const Range my_out_in_rows = block_range(rows, pc, me_j);
  const Range my_out_in_cols = block_range(cols, pr, me_i);
  for (int t = 0; t < p; ++t) {
    const int ti = t / pc, tj = t % pc;
    const Range sr = intersect(my_rows, block_range(rows, pc, tj));
    const Range sc = intersect(my_cols, block_range(cols, pr, ti));
    plan.sends[t] = {sr.begin, sr.size(), sc.begin, sc.size(), plan.send_total};
    plan.send_total += sr.size() * sc.size();
    if (t != me_i * pc + me_j) plan.elements_sent += sr.size() * sc.size();
    const Range rr = intersect(block_range(rows, pr, ti), my_out_in_rows);
    const Range rc = intersect(block_range(cols, pc, tj), my_out_in_cols);
    plan.receives[t] = {rr.begin, rr.size(), rc.begin, rc.size(), plan.receive_total};
    plan.receive_total += rr.size() * rc.size();
  }
  return plan;
}

template <class T>
std::size_t BlockTranspose<T>::elements_sent(std::size_t rows, std::size_t cols, int pr, int pc,
                                             int i, int j) {
  return plan(rows, cols, pr, pc, i, j).elements_sent;
}

template <class T>
BlockTranspose<T>::BlockTranspose(const Torus& torus, std::size_t rows, std::size_t cols,
                                  bool staged)
    : torus_(torus), rows_(rows), cols_(cols), staged_(staged) {
  const int pr = torus.size(Axis::row), pc = torus.size(Axis::col);
  Plan p = plan(rows, cols, pr, pc, torus.coord(Axis::row), torus.coord(Axis::col));
  sends_ = std::move(p.sends);
  receives_ = std::move(p.receives);
  elements_sent_ = p.elements_sent;
  for (const Piece& s : sends_) {
    send_counts_.push_back(static_cast<int>(s.rows * s.cols));
    send_offsets_.push_back(static_cast<int>(s.offset));
  }
  for (const Piece& r : receives_) {
    receive_counts_.push_back(static_cast<int>(r.rows * r.cols));
    receive_offsets_.push_back(static_cast<int>(r.offset));
  }
  const std::size_t send_total = p.send_total, receive_total = p.receive_total;
  send_ = Buffer<T>("relayout_send", send_total);
  receive_ = Buffer<T>("relayout_receive", receive_total);
  if (staged_) {  // separate host memory, also where the device memory is host memory
    send_host_ = HostBuffer<T>("relayout_send_host", send_total);
    receive_host_ = HostBuffer<T>("relayout_receive_host", receive_total);
  }
}

template <class T>
std::size_t BlockTranspose<T>::bytes() const {
  const std::size_t device = elements(send_) + elements(receive_);
  const std::size_t host = elements(send_host_) + elements(receive_host_);  // staged only
  return (device + host) * sizeof(T);
}

template <class T>
void BlockTranspose<T>::run(const ExecSpace& space, const Matrix<T>& in, const Matrix<T>& out) {
  const int pr = torus_.size(Axis::row), pc = torus_.size(Axis::col);
  require(in.extent(0) == rows_ / pr && in.extent(1) == cols_ / pc && out.extent(0) == cols_ / pr &&
              out.extent(1) == rows_ / pc,
          "re-layout: shards ", in.extent(0), "x", in.extent(1), " -> ", out.extent(0), "x",
          out.extent(1), " do not match the planned ", rows_, " x ", cols_, " matrix");
  const std::size_t in_row0 = rows_ / pr * torus_.coord(Axis::row);
  const std::size_t in_col0 = cols_ / pc * torus_.coord(Axis::col);
  // Out block rows start at input column out_row0, its columns at input row out_col0.
  const std::size_t out_row0 = cols_ / pr * torus_.coord(Axis::row);
  const std::size_t out_col0 = rows_ / pc * torus_.coord(Axis::col);
  const Buffer<T> send = send_, receive = receive_;
  // Pack every piece transposed (column of the input = row of the output, contiguous).
  for (const Piece& s : sends_) {
    if (s.rows * s.cols == 0) continue;
    const std::size_t r0 = s.row0 - in_row0, c0 = s.col0 - in_col0, n = s.rows, base = s.offset;
    Kokkos::parallel_for(
        "relayout_pack", Kokkos::RangePolicy<ExecSpace>(space, 0, s.rows * s.cols),
        KOKKOS_LAMBDA(std::size_t k) { send(base + k) = in(r0 + k % n, c0 + k / n); });
  }
  if (staged_) Kokkos::deep_copy(space, send_host_, send_);
  fence(space, "relayout_pack");
  {
    const AxisComm& tp = torus_.axis(Axis::tp);
    const RecordedOp op(ring_op(CommKind::all_to_all, tp, send_.extent(0), sizeof(T)));
    MPI_Alltoallv(staged_ ? send_host_.data() : send_.data(), send_counts_.data(),
                  send_offsets_.data(), mpi_datatype<T>(),
                  staged_ ? receive_host_.data() : receive_.data(), receive_counts_.data(),
                  receive_offsets_.data(), mpi_datatype<T>(), tp.comm());
  }
  if (staged_) Kokkos::deep_copy(space, receive_, receive_host_);
  for (const Piece& r : receives_) {
    if (r.rows * r.cols == 0) continue;
    // The piece holds input rows [row0, +rows) x cols [col0, +cols), column by column: output
    // row (col0 + c - out_row0), output columns (row0 - out_col0) onwards.
    const std::size_t orow0 = r.col0 - out_row0, ocol0 = r.row0 - out_col0, n = r.rows,
                      base = r.offset;
    Kokkos::parallel_for(
        "relayout_unpack", Kokkos::RangePolicy<ExecSpace>(space, 0, r.rows * r.cols),
        KOKKOS_LAMBDA(std::size_t k) { out(orow0 + k / n, ocol0 + k % n) = receive(base + k); });
  }
  fence(space, "relayout_unpack");
}

template class BlockTranspose<float>;
template class BlockTranspose<double>;

}  // namespace meshslice
