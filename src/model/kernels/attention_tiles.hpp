#pragma once
// The building blocks of fused attention (model/kernels/fused_attention.hpp): a tile product
// that a team computes from its scratch memory, and each backend's micro-tile.
//
// A tile product is cut into micro-tiles of kMicroRows x micro_cols<T>() outputs; each of the
// team's threads takes whole micro-tiles and keeps one in registers while it walks the inner
// dimension, so every load of B serves kMicroRows multiply-adds and every load of A
// micro_cols<T>() of them.
//   - On a CPU (a team of one thread) rows of two vector registers with contiguous columns: a
//     register-blocked GEMM the compiler vectorizes along the micro-tile's columns. With
//     AVX-512, 8 rows of two 64-byte registers (16 accumulators of the 32 registers): 126-139
//     GFLOP/s on one core of the development VM's Sapphire Rapids for the tile products of
//     attention (64 x 64 x 128, 64 x 128 x 64), against 76-84 with AVX2's 4 rows of two 32-byte
//     registers, which AVX2 keeps (8 rows would need 18 of its 16 vector registers).
//   - On a GPU 2 x 4, the 4 columns `across` apart (the number of micro-tiles across the tile),
//     so that a warp's threads read B and write C in neighbouring columns: a 32 x 32 tile of
//     scores is then a micro-tile for each of a team's 128 threads. (4 x 16 with contiguous
//     columns left 4 of a team's threads working on the 16 x 16 tiles a GPU's scratch fits:
//     0.25 TFLOP/s on an H200.)
// The output may lie in global memory and be a part of the tile (TileOut's rows and cols): a
// micro-tile across its edge is computed whole and only its part inside is read and written.
#include <cstddef>

#include "core/host_vectors.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice::attention_tiles {

// Whether the backend runs on the host (a team is one thread) or on a GPU (a team is many).
// MESHSLICE_ATTENTION_GPU_SHAPES (a test build's switch) gives a CPU the GPU's tiles and
// micro-tiles, with teams of one thread, so that a machine without a GPU checks their indexing.
#ifdef MESHSLICE_ATTENTION_GPU_SHAPES
constexpr bool kHostBackend = false;
#else
constexpr bool kHostBackend = kRunsOnHost;
#endif

constexpr int kMicroRows = kHostBackend ? (kHostVectorBytes == 64 ? 8 : 4) : 2;
template <class T>
KOKKOS_INLINE_FUNCTION constexpr int micro_cols() {
  return kHostBackend ? static_cast<int>(2 * kHostVectorBytes / sizeof(T)) : 4;
}

// An operand of a tile product: element (i, j) at data[i * row + j * col] (a transposed tile
// is the same memory with the strides swapped).
template <class T>
struct TileIn {
  const T* data;
  int row, col;
};

// A tile product's output: element (i, j) at data[i * ld + j], of which the first `rows` x
// `cols` are read and written; with row_scale, an accumulated row i is first multiplied by
// row_scale[i] (the online softmax's rescale of its output so far).
template <class T>
struct TileOut {
  T* data;
  int ld, rows, cols;
  const T* row_scale = nullptr;
};

// C = A B or C += A B, as a team computes it.
template <class T>
struct TileProduct {
  TileIn<T> a, b;
  TileOut<T> c;
};

// The micro-tile of c at rows r0 .. r0 + R - 1 and columns c0, c0 + step, ...: = or += A B
// over `inner` steps; one thread's share.
template <int R, class T>
KOKKOS_FORCEINLINE_FUNCTION void micro_tile_product(int inner, const TileIn<T>& a,
                                                    const TileIn<T>& b, const TileOut<T>& c, int r0,
                                                    int c0, int step, bool accumulate) {
  constexpr int C = micro_cols<T>();
#if MESHSLICE_HOST_VECTORS
  // One register of a micro-tile row as one vector value (core/host_vectors.hpp): the loop below
  // then multiplies and adds whole registers, and the compiler keeps the micro-tile in them.
  // Left to itself, GCC 12 vectorized that loop across the micro-tile's rows instead, with
  // shuffles and spills (6x slower than the BLAS-block kernel); with 64-byte values on an AVX2
  // machine it spilled them.
  using Vec = HostVector<T>;
  constexpr int L = sizeof(Vec) / sizeof(T);
  if constexpr (C % L == 0) {
    // The vector path: contiguous columns of B and C, the micro-tile wholly inside C.
    if (step == 1 && b.col == 1 && r0 + R <= c.rows && c0 + C <= c.cols) {
      constexpr int V = C / L;
      const T* a0 = a.data + r0 * a.row;
      const T* b0 = b.data + c0;
      T* c_0 = c.data + r0 * c.ld + c0;
      Vec acc[R][V];
      for (int r = 0; r < R; ++r) {
        const T scale = c.row_scale ? c.row_scale[r0 + r] : T(1);
        for (int v = 0; v < V; ++v)
          acc[r][v] =
              accumulate ? *reinterpret_cast<const Vec*>(c_0 + r * c.ld + v * L) * scale : Vec{};
      }
      for (int k = 0; k < inner; ++k) {
        Vec b_k[V];  // in registers: each serves every row
        for (int v = 0; v < V; ++v) {
          b_k[v] = *reinterpret_cast<const Vec*>(b0 + k * b.row + v * L);
#if defined(__x86_64__) && defined(__AVX__)  // a 32- or 64-byte register
          asm("" : "+x"(b_k[v]));  // keep it in a register: GCC 12 loads it again for every row
#endif
        }
        for (int r = 0; r < R; ++r) {
          const T a_rk = a0[r * a.row + k * a.col];
          for (int v = 0; v < V; ++v) acc[r][v] += a_rk * b_k[v];
        }
      }
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) *reinterpret_cast<Vec*>(c_0 + r * c.ld + v * L) = acc[r][v];
      return;
    }
  }
#endif
  T acc[R][C];
  for (int r = 0; r < R; ++r) {
    const T scale = c.row_scale ? c.row_scale[r0 + r] : T(1);
    for (int j = 0; j < C; ++j) {
      const int row = r0 + r, col = c0 + j * step;
      acc[r][j] =
          accumulate && row < c.rows && col < c.cols ? c.data[row * c.ld + col] * scale : T(0);
    }
  }
  for (int k = 0; k < inner; ++k)
    for (int r = 0; r < R; ++r) {
      const T a_rk = a.data[(r0 + r) * a.row + k * a.col];
      for (int j = 0; j < C; ++j) acc[r][j] += a_rk * b.data[k * b.row + (c0 + j * step) * b.col];
    }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) {
      const int row = r0 + r, col = c0 + j * step;
      if (row < c.rows && col < c.cols) c.data[row * c.ld + col] = acc[r][j];
    }
}

// C = A B (or C += A B with `accumulate`) for each of `count` products of an m x n tile C, A m x
// inner and B inner x n, in one pass over the team's threads (two small products together keep
// twice the threads busy). m is a multiple of R (rows of a micro-tile) and n of micro_cols<T>();
// A's and B's elements past the inner dimension are never read, and outputs past C's part are
// computed from whatever A and B hold there and dropped.
template <int R = kMicroRows, class T, class Member>
KOKKOS_FORCEINLINE_FUNCTION void team_tile_products(const Member& team, int m, int n, int inner,
                                                    const TileProduct<T>* products, int count,
                                                    bool accumulate) {
  constexpr int C = micro_cols<T>();
  const int across = n / C, tasks = (m / R) * across;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * tasks), [&](int task) {
    const TileProduct<T>& p = products[task / tasks];
    const int r0 = (task % tasks / across) * R, group = task % across;
    const int c0 = kHostBackend ? group * C : group, step = kHostBackend ? 1 : across;
    if (r0 < p.c.rows && c0 < p.c.cols)
      micro_tile_product<R>(inner, p.a, p.b, p.c, r0, c0, step, accumulate);
  });
}

// One product.
template <class T, class Member>
KOKKOS_INLINE_FUNCTION void team_tile_product(const Member& team, int m, int n, int inner,
                                              const TileIn<T>& a, const TileIn<T>& b,
                                              const TileOut<T>& c, bool accumulate) {
  const TileProduct<T> product{a, b, c};
  team_tile_products(team, m, n, inner, &product, 1, accumulate);
}

// n rounded up to a multiple of `step`.
KOKKOS_INLINE_FUNCTION constexpr std::size_t round_up(std::size_t n, std::size_t step) {
  return (n + step - 1) / step * step;
}

}  // namespace meshslice::attention_tiles
