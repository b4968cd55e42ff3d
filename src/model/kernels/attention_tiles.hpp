#pragma once
// The building blocks of fused attention (model/kernels/fused_attention.hpp): a tile product
// that a team computes from its scratch memory, and the tile size that fits a backend's scratch.
//
// A tile product is cut into micro-tiles of kMicroRows x micro_cols<T>() outputs; each of the
// team's threads takes whole micro-tiles and keeps one in registers while it walks the inner
// dimension, so every load of B serves kMicroRows multiply-adds and every load of A
// micro_cols<T>() of them. On a CPU (a team of one thread) that is a register-blocked GEMM the
// compiler vectorizes along the micro-tile's columns; on a GPU, a thread per micro-tile reading
// shared memory.
#include <cstddef>

#include "core/kokkos_types.hpp"

namespace meshslice::attention_tiles {

constexpr int kMicroRows = 4;
// 64 bytes of columns: four AVX2 or one AVX-512 register of float per micro-tile row.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr int micro_cols() {
  return static_cast<int>(64 / sizeof(T));
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// 32 bytes of a micro-tile row as one value of the compiler's vector extension (GCC's and
// Clang's), an AVX register: the loop below then multiplies and adds whole registers, and the
// compiler keeps the micro-tile in them. Left to itself, GCC 12 vectorized that loop across the
// micro-tile's rows instead, with shuffles and spills (6x slower than the BLAS-block kernel);
// with 64-byte values on an AVX2 machine it spilled them.
template <class T>
struct Lanes;
// `type` is read and written at any element's alignment (a tile's rows are not 32-byte aligned).
template <>
struct Lanes<float> {
  typedef float type __attribute__((vector_size(32), aligned(4)));
};
template <>
struct Lanes<double> {
  typedef double type __attribute__((vector_size(32), aligned(8)));
};
#endif

// acc (kMicroRows x micro_cols<T>() at c, row stride ldc) = or += A B over `inner` steps, with
// A(r, k) = a[r * a_row + k * a_inner] and B(k, c) = b[k * ldb + c]: one thread's share.
template <class T>
KOKKOS_INLINE_FUNCTION void micro_tile_product(int inner, const T* a, int a_row, int a_inner,
                                               const T* b, int ldb, T* c, int ldc,
                                               bool accumulate) {
  constexpr int R = kMicroRows;
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  using Vec = typename Lanes<T>::type;
  constexpr int V = static_cast<int>(micro_cols<T>() * sizeof(T) / sizeof(Vec)),
                L = sizeof(Vec) / sizeof(T);
  Vec acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = accumulate ? *reinterpret_cast<const Vec*>(c + r * ldc + v * L) : Vec{};
  for (int k = 0; k < inner; ++k) {
    Vec b_k[V];  // in registers: each serves every row
    for (int v = 0; v < V; ++v) {
      b_k[v] = *reinterpret_cast<const Vec*>(b + k * ldb + v * L);
#if defined(__x86_64__) && defined(__AVX__)  // a 32-byte register
      asm("" : "+x"(b_k[v]));  // keep it in a register: GCC 12 loads it again for every row
#endif
    }
    for (int r = 0; r < R; ++r) {
      const T a_rk = a[r * a_row + k * a_inner];
      for (int v = 0; v < V; ++v) acc[r][v] += a_rk * b_k[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) *reinterpret_cast<Vec*>(c + r * ldc + v * L) = acc[r][v];
#else
  constexpr int C = micro_cols<T>();
  T acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) acc[r][j] = accumulate ? c[r * ldc + j] : T(0);
  for (int k = 0; k < inner; ++k)
    for (int r = 0; r < R; ++r) {
      const T a_rk = a[r * a_row + k * a_inner];
      for (int j = 0; j < C; ++j) acc[r][j] += a_rk * b[k * ldb + j];
    }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) c[r * ldc + j] = acc[r][j];
#endif
}

// C = A B (or C += A B with `accumulate`) for an m x n tile C with row stride ldc, where
// A(r, k) = a[r * a_row + k * a_inner] (so a transposed A is a stride) and B(k, c) =
// b[k * ldb + c]. m is a multiple of kMicroRows and n of micro_cols<T>().
template <class T, class Member>
KOKKOS_INLINE_FUNCTION void team_tile_product(const Member& team, int m, int n, int inner,
                                              const T* a, int a_row, int a_inner, const T* b,
                                              int ldb, T* c, int ldc, bool accumulate) {
  constexpr int R = kMicroRows, C = micro_cols<T>();
  const int tiles_across = n / C;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (m / R) * tiles_across), [&](int tile) {
    const int r0 = (tile / tiles_across) * R, c0 = (tile % tiles_across) * C;
    micro_tile_product(inner, a + r0 * a_row, a_row, a_inner, b + c0, ldb, c + r0 * ldc + c0, ldc,
                       accumulate);
  });
}

// n rounded up to a multiple of `step`.
KOKKOS_INLINE_FUNCTION constexpr std::size_t round_up(std::size_t n, std::size_t step) {
  return (n + step - 1) / step * step;
}

}  // namespace meshslice::attention_tiles
