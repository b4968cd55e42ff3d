#pragma once
// One of a CPU's vector registers as one value of GCC's and Clang's vector extension, for the
// loops a compiler will not vectorize well by itself: fused attention's micro-tiles
// (model/kernels/attention_tiles.hpp), the folds of core/fold_in_lanes.hpp and fast_exp's lanes.
// A vector the width of a register stays in one (a wider one has no machine mode, and GCC keeps
// it in memory); each lane takes the scalar code's operations, so results keep their bits (but
// for the multiply-adds a compiler fuses in one form and not the other: core/fold_in_lanes.hpp).
//   - HostVector<T>: wherever the code is not compiled for a GPU (nvcc's host pass included).
//   - MESHSLICE_HOST_VECTOR_FOLDS: the folds' and fast_exp's use of it, for host compilers only:
//     nvcc's front end crashes on parts of the extension (a vector's ?: after T{}), and its
//     builds run those loops on the GPU anyway, a row to a team.
#include <Kokkos_Macros.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>


#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define MESHSLICE_HOST_VECTORS 1
#else
#define MESHSLICE_HOST_VECTORS 0
#endif

#if MESHSLICE_HOST_VECTORS && defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define MESHSLICE_HOST_VECTOR_FOLDS 1
#else
#define MESHSLICE_HOST_VECTOR_FOLDS 0
#endif

namespace meshslice {

// The register's bytes where the code is compiled for the host: AVX-512's, AVX's, or the 16 bytes
// every x86-64 (SSE2) and AArch64 (NEON) CPU has (a wider value would be passed in memory: a
// different ABI, which GCC warns of).
#if defined(__AVX512F__)
constexpr int kHostVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kHostVectorBytes = 32;
#else
constexpr int kHostVectorBytes = 16;
#endif

// How many Ts one register holds.
template <class T>
constexpr std::size_t kHostVectorLanes = kHostVectorBytes / sizeof(T);

// kHostVectorBytes as the library was compiled (core/version.cpp, built with the library's
// kernel flags; `--version` prints it). A program that instantiates the header-only kernels
// itself must see the same value: the linker keeps one of each inline instantiation, so tiles
// sized in one translation unit could meet micro-tiles of another (meshslice_kernel_flags).
int library_host_vector_bytes();

#if MESHSLICE_HOST_VECTORS
// N Ts as a vector, for arithmetic T only (otherwise no `type`: a caller's substitution fails
// and it keeps its scalar code). Aligned as its element, so that a row's values are read and
// written where they lie.
template <class T, std::size_t N, class = void>
struct VectorOf {};
template <class T, std::size_t N>
struct VectorOf<T, N, std::enable_if_t<std::is_arithmetic_v<T>>> {
  typedef T type __attribute__((vector_size(N * sizeof(T)), aligned(alignof(T))));
};

template <class T>
using HostVector = typename VectorOf<T, kHostVectorLanes<T>>::type;

// values[0 .. N - 1] as a vector, and back.
template <class T, std::size_t N = kHostVectorLanes<T>>
inline typename VectorOf<T, N>::type load_vector(const T* values) {
  return *reinterpret_cast<const typename VectorOf<T, N>::type*>(values);
}
// (v's type is named, not deduced: deduction would drop the typedef's alignment.)
template <class T, std::size_t N = kHostVectorLanes<T>>
inline void store_vector(T* values, const typename VectorOf<T, N>::type& v) {
  *reinterpret_cast<typename VectorOf<T, N>::type*>(values) = v;
}
#endif

#if MESHSLICE_HOST_VECTOR_FOLDS
// Every lane c.
template <class T>
inline HostVector<T> filled_vector(T c) {
  return HostVector<T>{} + c;
}
#endif

}  // namespace meshslice
