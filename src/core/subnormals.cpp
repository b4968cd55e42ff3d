#include "core/subnormals.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace meshslice {

namespace {

void flush_on_this_thread() {
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
  _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
#endif
}

}  // namespace

void flush_subnormals_on_host_threads() {
  flush_on_this_thread();
#if defined(_OPENMP)
  // Every thread of the OpenMP pool, which Kokkos' OpenMP backend runs its kernels on.
#pragma omp parallel
  flush_on_this_thread();
#endif
}

}  // namespace meshslice
