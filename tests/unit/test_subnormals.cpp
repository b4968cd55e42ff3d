// core/subnormals.hpp: after flush_subnormals_on_host_threads(), a kernel on the host pool that
// makes a subnormal float gets 0 (FTZ) and one that reads a subnormal reads 0 (DAZ); before it,
// the same kernel keeps both, so the check tells the two apart. x86 only (elsewhere a no-op).
#include <gtest/gtest.h>

#include <limits>

#include "core/kokkos_compat.hpp"
#include "core/subnormals.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace meshslice {
namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using Floats = Kokkos::View<float*, Kokkos::HostSpace>;

// made(i) = in(i) / 2, read(i) = half(i) * 2, on every thread of the host pool.
void halve_and_double(const Floats& in, const Floats& half, const Floats& made,
                      const Floats& read) {
  Kokkos::parallel_for("test_subnormals", Kokkos::RangePolicy<Host>(0, in.extent(0)),
                       [=](std::size_t i) {
                         made(i) = in(i)*0.5f;
                         read(i) = half(i) * 2.0f;
                       });
  Host().fence();
}

TEST(Subnormals, FlushedToZeroOnEveryHostThread) {
#if defined(__x86_64__) || defined(__i386__)
  const std::size_t n = 4096;
  const float smallest_normal = std::numeric_limits<float>::min();
  Floats in("in", n), half("half", n), made("made", n), read("read", n);
  Kokkos::deep_copy(in, smallest_normal);
  Kokkos::deep_copy(half, smallest_normal / 2);  // a subnormal, made before any flush
  ASSERT_GT(smallest_normal / 2, 0.0f);
  const unsigned saved = _mm_getcsr();
  halve_and_double(in, half, made, read);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(made(i), smallest_normal / 2) << "subnormals were flushed before the call";
    ASSERT_EQ(read(i), smallest_normal);
  }
  flush_subnormals_on_host_threads();
  halve_and_double(in, half, made, read);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(made(i), 0.0f) << "element " << i << ": a subnormal result was kept";
    EXPECT_EQ(read(i), 0.0f) << "element " << i << ": a subnormal input was read";
  }
  // The other tests of this program run with the control word they started with.
#if defined(_OPENMP)
#pragma omp parallel
  _mm_setcsr(saved);
#endif
  _mm_setcsr(saved);
#else
  GTEST_SKIP() << "FTZ and DAZ are x86's";
#endif
}

}  // namespace
}  // namespace meshslice
