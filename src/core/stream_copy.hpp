#pragma once
// Large contiguous host copies with streaming (non-temporal) stores.
//
// Why: a plain copy of a buffer larger than the caches first reads every destination line into
// the cache (write-allocate) and then writes it back: three bytes of memory traffic per byte
// copied. Streaming stores write whole lines without reading them: two. On the 2-core
// development VM (AMD EPYC, 32 MiB L3) 16-64 MiB copies ran at 17-28 GB/s with them against
// glibc memcpy's 11-19 GB/s in the same process. A copy that leaves the destination in memory
// instead of cache only pays off when the destination would not stay in cache anyway, hence the
// size threshold. Device memory, small copies and hosts without SSE2 take Kokkos::deep_copy.
#include <Kokkos_Core.hpp>

#include "core/kokkos_types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace meshslice {

// Copies of at least this many bytes stream (a few MiB: past a core's share of a typical L3).
inline constexpr std::size_t kStreamCopyMinBytes = std::size_t(4) << 20;

// dst[0, bytes) = src[0, bytes), dst's whole 64-byte lines written with streaming stores (its
// partial first and last lines with plain ones). Ends with a store fence: streaming stores are
// weakly ordered, and MPI or another thread may read dst right after.
inline void stream_copy_bytes(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const std::size_t head = (64 - reinterpret_cast<std::uintptr_t>(d) % 64) % 64;
  if (head >= bytes) return static_cast<void>(std::memcpy(d, s, bytes));
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  // Four 16-byte stores per iteration fill one whole line, so the write-combining buffer
  // flushes full lines.
  const std::size_t lines = bytes / 64;
  for (std::size_t i = 0; i < lines; ++i) {
    const auto* from = reinterpret_cast<const __m128i*>(s) + 4 * i;
    auto* to = reinterpret_cast<__m128i*>(d) + 4 * i;
    const __m128i x0 = _mm_loadu_si128(from), x1 = _mm_loadu_si128(from + 1);
    const __m128i x2 = _mm_loadu_si128(from + 2), x3 = _mm_loadu_si128(from + 3);
    _mm_stream_si128(to, x0);
    _mm_stream_si128(to + 1, x1);
    _mm_stream_si128(to + 2, x2);
    _mm_stream_si128(to + 3, x3);
  }
  std::memcpy(d + 64 * lines, s + 64 * lines, bytes % 64);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Whether large_copy may copy src's bytes into dst's as they lie: the same extents, and the
// same element order (rank 1, or one layout that is not strided), contiguous, neither aliasing
// nor partly overlapping the other. Anything else is left to Kokkos::deep_copy, which copies
// element by element, refuses what it must and skips a copy onto itself.
template <class Dst, class Src>
bool same_bytes_layout(const Dst& dst, const Src& src) {
  using Layout = typename Dst::array_layout;
  constexpr bool same_order =
      Dst::rank == 1 || (std::is_same_v<Layout, typename Src::array_layout> &&
                         !std::is_same_v<Layout, Kokkos::LayoutStride>);
  // Decided at compile time where it can be: otherwise nvcc warns that the rest is unreachable
  // in the instantiations where it is.
  if constexpr (!same_order || static_cast<int>(Dst::rank) != static_cast<int>(Src::rank)) {
    return false;
  } else {
    for (unsigned r = 0; r < Dst::rank; ++r)
      if (dst.extent(r) != src.extent(r)) return false;
    if (!dst.span_is_contiguous() || !src.span_is_contiguous()) return false;
    const auto* d = reinterpret_cast<const char*>(dst.data());
    const auto* s = reinterpret_cast<const char*>(src.data());
    const std::size_t bytes = dst.span() * sizeof(typename Dst::value_type);
    return d + bytes <= s || s + bytes <= d;  // disjoint
  }
}

// dst = src, ordered on `space` like Kokkos::deep_copy(space, dst, src): streamed in chunks by
// `space`'s threads when `space` runs on the host, both views are host memory laid out alike
// (same_bytes_layout) and the copy is large; deep_copy otherwise.
template <class Exec, class Dst, class Src>
void large_copy(const Exec& space, const Dst& dst, const Src& src) {
  static_assert(
      std::is_same_v<typename Dst::non_const_value_type, typename Src::non_const_value_type>,
      "large_copy: the views hold different types");
#if defined(__SSE2__)
  constexpr bool host =
      Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible &&
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Dst::memory_space>::accessible &&
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Src::memory_space>::accessible;
  if constexpr (host) {
    const std::size_t bytes = elements(dst) * sizeof(typename Dst::value_type);
    if (bytes >= kStreamCopyMinBytes && same_bytes_layout(dst, src)) {
      // About one chunk per thread, in whole lines, between 256 KiB (less is not worth a task)
      // and 1 MiB (a larger copy gets more chunks than threads, which evens out their ends).
      const std::size_t threads = std::max(1, static_cast<int>(space.concurrency()));
      const std::size_t chunk = std::clamp<std::size_t>(
          (bytes / threads + 63) / 64 * 64, std::size_t(256) << 10, std::size_t(1) << 20);
      const std::size_t chunks = (bytes + chunk - 1) / chunk;
      char* to = reinterpret_cast<char*>(dst.data());
      const char* from = reinterpret_cast<const char*>(src.data());
      Kokkos::parallel_for("meshslice::stream_copy", Kokkos::RangePolicy<Exec>(space, 0, chunks),
                           [=](const std::size_t c) {
                             const std::size_t begin = c * chunk;
                             stream_copy_bytes(to + begin, from + begin,
                                               std::min(chunk, bytes - begin));
                           });
      return;
    }
  }
#endif
  Kokkos::deep_copy(space, dst, src);
}

}  // namespace meshslice
