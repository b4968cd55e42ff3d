#pragma once
// Contiguous communication buffers and the Kokkos kernels that move data between shards and
// them. Everything is templated on the memory space, so the same code serves Serial, OpenMP,
// CUDA and HIP builds.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#include "comm/comm_scratch.hpp"
#include "comm/ring_schedules.hpp"
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "core/stream_copy.hpp"

namespace meshslice {

template <class Space>
using SpaceExec = typename Space::execution_space;

// A shard seen as one flat array. Matrix views are LayoutRight and, unlike column subviews
// (LayoutStride), contiguous; that is checked here once for every collective.
template <class T, class Space>
Buffer<T, Space> flat(const Matrix<T, Space>& m) {
  if (!m.span_is_contiguous()) throw std::logic_error("collective on a non-contiguous matrix view");
  return Buffer<T, Space>(m.data(), elements(m));
}

// dst[i] = a[i] + b[i] for raw pointers into memory of `Space` (dst may be a or b: dst += b).
template <class Space, class T>
void sum_in(T* dst, const T* a, const T* b, std::size_t count) {
  Kokkos::View<T*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(dst, count);
  Kokkos::View<const T*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x(a, count), y(b, count);
  Kokkos::parallel_for(
      "meshslice::sum", Kokkos::RangePolicy<SpaceExec<Space>>(0, count),
      KOKKOS_LAMBDA(const std::size_t i) { d(i) = x(i) + y(i); });
  SpaceExec<Space>().fence();  // MPI may send the result right after
}

// The memory MPI reads and writes for a device buffer: the buffer itself when the host can touch
// it or MPI is GPU-aware; otherwise a host mirror, carved from the collective's (pinned) scratch,
// that push() and pull_all() keep in step. They copy on the collective's own instance and wait for that
// instance only, so a staged collective never waits for the compute instance's GEMMs (a global
// deep_copy would), and on a GPU the copy engine moves the bytes while the SMs multiply.
template <class T, class Space>
class MpiBuffer {
 public:
  MpiBuffer() = default;
  MpiBuffer(const Buffer<T, Space>& device, bool staged, ScratchCarver<T, Space>& carver)
      : device_(device), staged_(staged), space_(carver.space()) {
    if (staged_) host_ = carver.host(device.extent(0), "mpi_stage");
  }
  T* data() const { return staged_ ? host_.data() : device_.data(); }
  bool staged() const { return staged_; }
  const Buffer<T, Space>& device() const { return device_; }

  // device -> MPI memory; done on return (MPI reads it next).
  void push(std::size_t offset, std::size_t count) const {
    if (!staged_) return;
    Kokkos::deep_copy(space_, range(host_, offset, count), range(device_, offset, count));
    fence(space_, "meshslice::stage_for_mpi");
  }
  // MPI memory -> device, queued on the collective's instance: a completion that runs more
  // kernels there (unpacking) fences once after them.
  void queue_pull_all() const {
    if (staged_) Kokkos::deep_copy(space_, device_, host_);
  }
  // MPI memory -> device; done on return (the collective completes with it).
  void pull_all() const {
    if (!staged_) return;
    queue_pull_all();
    fence(space_, "meshslice::stage_from_mpi");
  }
  void push_all() const { push(0, device_.extent(0)); }

  // dst = a + b on the memory MPI works in (host kernels when staged).
  Sum<T> sum() const {
    if (staged_) return &sum_in<Kokkos::HostSpace, T>;
    return &sum_in<Space, T>;
  }

 private:
  template <class V>
  static auto range(const V& v, std::size_t offset, std::size_t count) {
    return Kokkos::subview(v, std::make_pair(offset, offset + count));
  }
  Buffer<T, Space> device_;
  HostBuffer<T> host_;
  bool staged_ = false;
  SpaceExec<Space> space_;  // the collective's instance (comm/comm_scratch.hpp's CommScratch)
};

// blocks[p][i][j] = m(i, p*c + j) for a matrix of P column blocks of width c: turns a gather or
// scatter along columns into one along contiguous blocks. (p, i, j) iteration with j innermost
// keeps both sides contiguous and needs no index division (these kernels move every byte of a
// column collective once more, so they are on the critical path).
template <class T, class Space, bool kPack>
void move_col_blocks(const Matrix<T, Space>& m, int parts, const Buffer<T, Space>& blocks,
                     const SpaceExec<Space>& space) {
  const std::int64_t rows = m.extent(0);
  const std::int64_t width = m.extent(1) / parts;
  // j innermost on every backend (a GPU's default iterates the first index fastest).
  using Policy =
      Kokkos::MDRangePolicy<SpaceExec<Space>,
                            Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
  Kokkos::parallel_for(
      kPack ? "meshslice::pack_col_blocks" : "meshslice::unpack_col_blocks",
      Policy(space, {0, 0, 0}, {std::int64_t(parts), rows, width}),
      KOKKOS_LAMBDA(const std::int64_t p, const std::int64_t i, const std::int64_t j) {
        const std::size_t index = (p * rows + i) * width + j;
        if (kPack)
          blocks(index) = m(i, p * width + j);
        else
          m(i, p * width + j) = blocks(index);
      });
}

template <class T, class Space>
void pack_col_blocks(const Matrix<T, Space>& m, int parts, const Buffer<T, Space>& blocks,
                     const SpaceExec<Space>& space) {
  move_col_blocks<T, Space, true>(m, parts, blocks, space);
}

template <class T, class Space>
void unpack_col_blocks(const Buffer<T, Space>& blocks, int parts, const Matrix<T, Space>& m,
                       const SpaceExec<Space>& space) {
  move_col_blocks<T, Space, false>(m, parts, blocks, space);
}

template <class T, class Space>
void copy_range(const Buffer<T, Space>& dst, std::size_t dst_offset, const Buffer<T, Space>& src,
                std::size_t src_offset, std::size_t count, const SpaceExec<Space>& space) {
  if (dst.data() + dst_offset == src.data() + src_offset) return;
  large_copy(space, Kokkos::subview(dst, std::make_pair(dst_offset, dst_offset + count)),
             Kokkos::subview(src, std::make_pair(src_offset, src_offset + count)));
}

}  // namespace meshslice
