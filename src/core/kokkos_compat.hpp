#pragma once
// The one place that papers over the differences between the Kokkos / KokkosKernels versions
// meshslice builds against: Debian 12's Kokkos 3.4 + KokkosKernels 3.4 (Serial) and spack's
// Kokkos 4.x + KokkosKernels 4.x (OpenMP, CUDA, HIP).
//   - labelled fences (Kokkos >= 3.5); 3.4 fences without the label, inside a profiling region
//     of that name so Kokkos tools still see what waited;
//   - KokkosBlas::gemm on an execution-space instance (KokkosKernels 4.x); 3.4 has only the
//     default-instance overload, so the instance is fenced first and the call runs on the
//     default one (on Serial, the only backend Debian ships, they are the same);
//   - math functions for kernels (kmath::sqrt & co.).
#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>

#include <string>
#include <type_traits>
#include <utility>

namespace meshslice {

template <class ExecSpace>
void fence(const ExecSpace& instance, const std::string& label) {
#if KOKKOS_VERSION >= 30500
  instance.fence(label);
#else
  Kokkos::Profiling::pushRegion(label);
  instance.fence();
  Kokkos::Profiling::popRegion();
#endif
}

template <class ExecSpace, class A, class B, class C>
void blas_gemm(const ExecSpace& instance, const char* transpose_a, const char* transpose_b,
               typename C::const_value_type alpha, const A& a, const B& b,
               typename C::const_value_type beta, const C& c) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40300
  KokkosBlas::gemm(instance, transpose_a, transpose_b, alpha, a, b, beta, c);
#else
  instance.fence();  // the default instance must not overtake work queued on `instance`
  KokkosBlas::gemm(transpose_a, transpose_b, alpha, a, b, beta, c);
#endif
}

// Two instances of an execution space that may run concurrently (compute and packing): separate
// streams on a GPU (Kokkos >= 4 partitions the default instance). Host backends keep the default
// instance for both: partitioning OpenMP would give each instance half of the threads, and
// Kokkos 3.4 has no partition_space.
template <class ExecSpace>
std::pair<ExecSpace, ExecSpace> two_instances() {
#if KOKKOS_VERSION >= 40000
  if constexpr (!std::is_same_v<ExecSpace, Kokkos::DefaultHostExecutionSpace>) {
    const auto parts = Kokkos::Experimental::partition_space(ExecSpace(), 1, 1);
    return {parts[0], parts[1]};
  }
#endif
  return {ExecSpace(), ExecSpace()};
}

// A profiling region for the lifetime of the object (Kokkos tools show algorithm steps).
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

// Math functions callable in kernels on every backend: Kokkos >= 3.7 has them in Kokkos::,
// 3.4 in Kokkos::Experimental:: (std:: would not compile for a GPU).
namespace kmath {
#if KOKKOS_VERSION >= 30700
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::log;
using Kokkos::sin;
using Kokkos::sqrt;
using Kokkos::tanh;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::log;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
using Kokkos::Experimental::tanh;
#endif
}  // namespace kmath

}  // namespace meshslice
