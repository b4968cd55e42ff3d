#pragma once
// Causal multi-head attention as fused kernels, in the manner of FlashAttention-2: one launch
// for the forward pass and one or two for the backward pass, whatever the number of sequences,
// heads and rows. The shard layout is attention.hpp's (qkv: [q | k | v] of the chip's heads, a: the
// heads side by side); the kernels read and write it in place, so nothing is packed.
//
// A team takes a tile of `tile` query rows of one (sequence, head) pair, keeps it in scratch
// memory and streams the key tiles at or below the diagonal through (the tiles above it are
// skipped: causal); the softmax is the online one (a running maximum m and sum l per row), so
// the probabilities are never stored: the forward pass keeps each row's log-sum-exp
// lse = m + log l, and the backward pass recomputes p = exp(s - lse) tile by tile.
//   forward:   o = softmax(q k^T / sqrt(dim)) v, lse
//   backward:  D = rowsum(do * o); per pair of tiles p, dp = do v^T, ds = p * (dp - D),
//              dv += p^T do, dk += ds^T q, dq += ds k.
// The backward pass comes in two shapes. Where there are at least as many (sequence, head)
// pairs as the backend runs teams at once (a CPU), a team takes a whole pair (one launch): it
// walks the key tiles, and for each the query tiles at or below the diagonal, adding into dq in
// dqkv as it goes; five tile products per pair of tiles. Elsewhere (a GPU, which needs many more
// teams) a team per key tile computes dk and dv and another launch's team per query tile dq,
// each recomputing s and dp: seven products. Either way each gradient element has one writer,
// so there are no atomics and the results are the same on every run.
// RoPE turns q and k as they are loaded (and the gradients back as they are stored), and q is
// multiplied by 1/sqrt(dim) on the way in.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "block/block_work.hpp"
#include "model/kernels/attention_tiles.hpp"
#include "model/kernels/rope_table.hpp"

namespace meshslice {

// What a fused kernel needs to know of the shard, captured by value.
template <class T>
struct FusedAttentionGeometry {
  std::size_t len = 0, heads = 0, dim = 0, half = 0, width = 0;  // width: heads x dim
  std::size_t tile = 0;    // rows of a query or key tile (a multiple of the micro-tiles)
  std::size_t padded = 0;  // dim rounded up to the micro-tile's columns
  std::size_t tiles = 0;   // tiles per sequence
  bool rope = false;
  T scale = 0;             // 1 / sqrt(dim)
  T lowest = 0;            // the running maximum's start
  bool pair_teams = true;  // the backward pass's shape: a team per pair, or per tile

  // Scratch elements a backward team takes (a forward team fewer): a team per pair keeps two
  // tiles more (k row-major, and dq).
  static std::size_t scratch_elements(std::size_t tile, std::size_t padded, bool pair_teams) {
    return (pair_teams ? 8 : 6) * tile * padded + 2 * tile * tile + 2 * tile;
  }
};

// The tile for a shard: 64 rows (fewer for shorter sequences), halved on a GPU until the
// backward pass's scratch fits a team's shared memory (Kokkos offers a team about 40 KiB of it:
// CUDA's 48 KiB per block without opting in, less its own share) or the tile is one micro-tile
// wide; a scratch that still does not fit goes to global memory (fused_attention_kernels::
// scratch_level). The backward pass takes a team per pair on a host backend with at least as
// many pairs as threads (`pair_teams`: forces either shape).
template <class T>
FusedAttentionGeometry<T> fused_attention_geometry(const AttentionShape& s, int pair_teams = -1) {
  using attention_tiles::round_up;
  constexpr std::size_t columns = attention_tiles::micro_cols<T>();
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  const std::size_t team_shared_bytes =
      static_cast<std::size_t>(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
  FusedAttentionGeometry<T> g;
  g.len = s.len;
  g.heads = s.heads;
  g.dim = s.dim;
  g.half = s.dim / 2;
  g.width = s.heads * s.dim;
  g.padded = round_up(s.dim, columns);
  g.pair_teams = pair_teams >= 0 ? pair_teams > 0
                                 : host && s.pairs() >= std::size_t(ExecSpace().concurrency());
  g.tile = std::min<std::size_t>(64, round_up(s.len, columns));
  while (!host && g.tile > columns &&
         FusedAttentionGeometry<T>::scratch_elements(g.tile, g.padded, g.pair_teams) * sizeof(T) >
             team_shared_bytes)
    g.tile /= 2;
  g.tiles = (s.len + g.tile - 1) / g.tile;
  g.rope = s.rope;
  g.scale = T(1) / static_cast<T>(std::sqrt(static_cast<double>(s.dim)));
  g.lowest = -std::numeric_limits<T>::max();
  return g;
}

namespace fused_attention_kernels {

using TeamPolicy = Kokkos::TeamPolicy<ExecSpace>;
using Member = TeamPolicy::member_type;
template <class T>
using ScratchBuffer = Kokkos::View<T*, ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// The scratch level a team's `elements` take: 0 (a GPU's shared memory) where they fit, else 1
// (global memory, slower; a tile of head dimension 128 in float needs 51 KiB in the backward
// pass). A CPU's is memory either way.
template <class T>
int scratch_level(std::size_t elements) {
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  return host || ScratchBuffer<T>::shmem_size(elements) <=
                     static_cast<std::size_t>(TeamPolicy::scratch_size_max(0))
             ? 0
             : 1;
}

template <class T>
TeamPolicy team_policy(const ExecSpace& space, std::size_t league, std::size_t elements) {
  TeamPolicy policy(space, static_cast<int>(league), Kokkos::AUTO);
  return policy.set_scratch_size(scratch_level<T>(elements),
                                 Kokkos::PerTeam(ScratchBuffer<T>::shmem_size(elements)));
}

// Rows [first, first + count) of pair sh in src's columns from `col0` + head x dim, into a tile
// of g.tile rows: row-major (dst[i * padded + d]) or transposed (dst[d * tile + i]); turned by
// their positions with `turn` (RoPE) and multiplied by `factor`; zeros where the tile pads. A
// thread per row: no index arithmetic per element (a division costs more than the copy).
template <class T>
KOKKOS_INLINE_FUNCTION void load_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                      const Packed<T>& table, const Matrix<T>& src,
                                      std::size_t col0, bool turn, std::size_t sh,
                                      std::size_t first, std::size_t count, T factor,
                                      bool transposed, T* dst) {
  const std::size_t token0 = (sh / g.heads) * g.len + first, col = col0 + (sh % g.heads) * g.dim;
  const std::size_t row_stride = transposed ? 1 : g.padded, col_stride = transposed ? g.tile : 1;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.tile), [&](std::size_t i) {
    T* out = dst + i * row_stride;
    const std::size_t width = i < count ? g.dim : 0;
    if (width > 0 && turn) {
      const T* x = &src(token0 + i, col);
      const std::size_t pos = first + i;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, g.half), [&](std::size_t k) {
        const T c = table(0, pos, k), s = table(1, pos, k), x1 = x[k], x2 = x[k + g.half];
        out[k * col_stride] = (x1 * c - x2 * s) * factor;
        out[(k + g.half) * col_stride] = (x2 * c + x1 * s) * factor;
      });
    } else if (width > 0) {
      const T* x = &src(token0 + i, col);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, g.dim),
                           [&](std::size_t d) { out[d * col_stride] = x[d] * factor; });
    }
    // The padding: rows past the sequence, and a row-major tile's columns past dim.
    const std::size_t end = transposed ? g.dim : g.padded;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, width, end),
                         [&](std::size_t d) { out[d * col_stride] = 0; });
  });
}

// The first `count` rows of a row-major tile into dst's rows from pair sh's `first` and columns
// from col0 + head x dim, multiplied by `factor`; `turn_back` undoes RoPE's turn (a gradient).
template <class T>
KOKKOS_INLINE_FUNCTION void store_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                       const Packed<T>& table, const T* tile, bool turn_back,
                                       T factor, std::size_t sh, std::size_t first,
                                       std::size_t count, const Matrix<T>& dst, std::size_t col0) {
  const std::size_t token0 = (sh / g.heads) * g.len + first, col = col0 + (sh % g.heads) * g.dim;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](std::size_t i) {
    const T* row = tile + i * g.padded;
    T* out = &dst(token0 + i, col);
    if (turn_back) {
      const std::size_t pos = first + i;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, g.half), [&](std::size_t k) {
        const T c = table(0, pos, k), s = table(1, pos, k), y1 = row[k], y2 = row[k + g.half];
        out[k] = (y1 * c + y2 * s) * factor;
        out[k + g.half] = (y2 * c - y1 * s) * factor;
      });
    } else {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, g.dim),
                           [&](std::size_t d) { out[d] = row[d] * factor; });
    }
  });
}

// The keys row i of the query tile at `q_first` (of `q_count` real rows) sees in the key tile
// at `k_first` (of `k_count`): those at or before its position; none for a padding row.
KOKKOS_INLINE_FUNCTION std::size_t causal_keys(std::size_t i, std::size_t q_first,
                                               std::size_t q_count, std::size_t k_first,
                                               std::size_t k_count) {
  if (i >= q_count || q_first + i < k_first) return 0;
  const std::size_t seen = q_first + i + 1 - k_first;
  return seen < k_count ? seen : k_count;
}

// The rows of the tile at `first` in a sequence of len rows.
KOKKOS_INLINE_FUNCTION std::size_t tile_rows(std::size_t first, std::size_t tile, std::size_t len) {
  return first + tile <= len ? tile : len - first;
}

// The (sequence, head) pair and the tile of it a team of a launch per tile takes (league rank =
// pair x tiles + tile): the tile's first row and its rows.
struct PairTile {
  std::size_t pair, first, count;
};
template <class T>
KOKKOS_INLINE_FUNCTION PairTile pair_tile(const Member& team, const FusedAttentionGeometry<T>& g) {
  const std::size_t rank = static_cast<std::size_t>(team.league_rank());
  const std::size_t first = (rank % g.tiles) * g.tile;
  return {rank / g.tiles, first, tile_rows(first, g.tile, g.len)};
}

// p = exp(s - lse) over each row's causal keys, 0 elsewhere (the backward pass's recomputed
// probabilities, in place of the scores).
template <class T>
KOKKOS_INLINE_FUNCTION void recompute_probabilities(const Member& team,
                                                    const FusedAttentionGeometry<T>& g, T* s,
                                                    const T* lse, std::size_t q_first,
                                                    std::size_t q_count, std::size_t k_first,
                                                    std::size_t k_count) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.tile), [&](std::size_t i) {
    T* row = s + i * g.tile;
    const std::size_t keys = causal_keys(i, q_first, q_count, k_first, k_count);
    for (std::size_t j = 0; j < keys; ++j) row[j] = kmath::fast_exp(row[j] - lse[i]);
    for (std::size_t j = keys; j < g.tile; ++j) row[j] = 0;
  });
}

// ds = p * (ds - D): the scores' gradient from the probabilities' (ds holds do v^T).
template <class T>
KOKKOS_INLINE_FUNCTION void score_gradient(const Member& team, const FusedAttentionGeometry<T>& g,
                                           const T* p, const T* row_dots, T* ds) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.tile), [&](std::size_t i) {
    const T* p_row = p + i * g.tile;
    T* ds_row = ds + i * g.tile;
    const T dot = row_dots[i];
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, g.tile),
                         [&](std::size_t j) { ds_row[j] = p_row[j] * (ds_row[j] - dot); });
  });
}

// What a backward team loads with a query tile: its log-sum-exps and D = rowsum(do * o).
template <class T>
KOKKOS_INLINE_FUNCTION void load_row_statistics(const Member& team,
                                                const FusedAttentionGeometry<T>& g,
                                                const Buffer<T>& lse, const Matrix<T>& a,
                                                const Matrix<T>& da, std::size_t sh,
                                                std::size_t first, std::size_t count, T* tile_lse,
                                                T* row_dots) {
  const std::size_t token0 = (sh / g.heads) * g.len + first, col = (sh % g.heads) * g.dim;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.tile), [&](std::size_t i) {
    T dot = 0;
    if (i < count)
      for (std::size_t d = 0; d < g.dim; ++d)
        dot += da(token0 + i, col + d) * a(token0 + i, col + d);
    row_dots[i] = dot;
    tile_lse[i] = i < count ? lse(sh * g.len + first + i) : T(0);
  });
}

// A backward team's scratch: the query tile's q and do, the key tile's k^T and v^T (dim x tile,
// each within a tile x padded share), p and ds, the query rows' log-sum-exps and D, then the
// tiles a kernel of its own keeps (the gradients it sums, k row-major): 2 or 4 of them, as
// scratch_elements() counts.
template <class T>
struct BackwardTiles {
  T *q, *dout, *kt, *vt, *p, *ds, *lse, *row_dots;
  T* own[4];
  KOKKOS_INLINE_FUNCTION BackwardTiles(T* base, std::size_t tile, std::size_t padded) {
    const std::size_t share = tile * padded;
    q = base;
    dout = q + share;
    kt = dout + share;
    vt = kt + share;
    p = vt + share;
    ds = p + tile * tile;
    lse = ds + tile * tile;
    row_dots = lse + tile;
    for (int i = 0; i < 4; ++i) own[i] = row_dots + tile + i * share;
  }
};

// What a backward team needs of a query tile: q (turned and scaled), do, and its rows'
// log-sum-exps and D = rowsum(do * o).
template <class T>
KOKKOS_INLINE_FUNCTION void load_query_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                            const Packed<T>& table, const Matrix<T>& qkv,
                                            const Matrix<T>& a, const Matrix<T>& da,
                                            const Buffer<T>& lse, std::size_t sh, std::size_t first,
                                            std::size_t count, T* q, T* dout, T* tile_lse,
                                            T* row_dots) {
  load_tile(team, g, table, qkv, 0, g.rope, sh, first, count, g.scale, false, q);
  load_tile(team, g, table, da, 0, false, sh, first, count, T(1), false, dout);
  load_row_statistics(team, g, lse, a, da, sh, first, count, tile_lse, row_dots);
}

// For a query tile (q, do and its statistics loaded) and a key tile (k^T, v^T): the
// probabilities p = exp(q k^T - lse) and the scores' gradient ds = p * (do v^T - D).
template <class T>
KOKKOS_INLINE_FUNCTION void probabilities_and_score_gradient(
    const Member& team, const FusedAttentionGeometry<T>& g, const T* q, const T* dout, const T* kt,
    const T* vt, const T* tile_lse, const T* row_dots, std::size_t q_first, std::size_t q_count,
    std::size_t k_first, std::size_t k_count, T* p, T* ds) {
  const int tile = int(g.tile), padded = int(g.padded);
  attention_tiles::team_tile_product(team, tile, tile, int(g.dim), q, padded, 1, kt, tile, p, tile,
                                     false);
  attention_tiles::team_tile_product(team, tile, tile, int(g.dim), dout, padded, 1, vt, tile, ds,
                                     tile, false);
  team.team_barrier();
  recompute_probabilities(team, g, p, tile_lse, q_first, q_count, k_first, k_count);
  team.team_barrier();
  score_gradient(team, g, p, row_dots, ds);
  team.team_barrier();
}

// dv += p^T do and dk += ds^T q (A's rows are the tiles' columns).
template <class T>
KOKKOS_INLINE_FUNCTION void add_key_gradients(const Member& team,
                                              const FusedAttentionGeometry<T>& g, const T* p,
                                              const T* ds, const T* dout, const T* q, T* dv,
                                              T* dk) {
  const int tile = int(g.tile), padded = int(g.padded);
  attention_tiles::team_tile_product(team, tile, padded, tile, p, 1, tile, dout, padded, dv, padded,
                                     true);
  attention_tiles::team_tile_product(team, tile, padded, tile, ds, 1, tile, q, padded, dk, padded,
                                     true);
}

// a and lse from qkv: a team per (pair, query tile).
template <class T>
void forward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
             const Packed<T>& table, const Matrix<T>& qkv, const Buffer<T>& lse,
             const Matrix<T>& a) {
  const std::size_t tile = g.tile, padded = g.padded;
  const std::size_t scratch = 3 * tile * padded + g.dim * tile + tile * tile + 2 * tile;
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_forward", team_policy<T>(space, pairs * g.tiles, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g);
        const std::size_t sh = t.pair, q_first = t.first, q_count = t.count;
        ScratchBuffer<T> buffer(team.team_scratch(level), scratch);
        T* const q = buffer.data();
        T* const v = q + tile * padded;
        T* const o = v + tile * padded;
        T* const kt = o + tile * padded;
        T* const s = kt + g.dim * tile;
        T* const m = s + tile * tile;
        T* const l = m + tile;
        load_tile(team, g, table, qkv, 0, g.rope, sh, q_first, q_count, g.scale, false, q);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * padded),
                             [&](std::size_t e) { o[e] = 0; });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](std::size_t i) {
          m[i] = g.lowest;
          l[i] = 0;
        });
        for (std::size_t k_first = 0; k_first <= q_first; k_first += tile) {
          const std::size_t k_count = tile_rows(k_first, tile, g.len);
          team.team_barrier();  // the previous tile's o += p v has read v
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, kt);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), false, v);
          team.team_barrier();
          attention_tiles::team_tile_product(team, int(tile), int(tile), int(g.dim), q, int(padded),
                                             1, kt, int(tile), s, int(tile), false);
          team.team_barrier();
          // The online softmax: each row's new maximum rescales its sum and output so far.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](std::size_t i) {
            T* row = s + i * tile;
            const std::size_t keys = causal_keys(i, q_first, q_count, k_first, k_count);
            if (keys > 0) {
              const T top = fold_in_lanes(keys, row[0], RowValues<T>{row}, FoldMax());
              const T new_max = top > m[i] ? top : m[i];
              const T sum = fold_in_lanes(keys, T(0), ExpInPlace<T>{row, new_max}, FoldSum());
              const T shrink = kmath::fast_exp(m[i] - new_max);
              l[i] = l[i] * shrink + sum;
              m[i] = new_max;
              for (std::size_t d = 0; d < padded; ++d) o[i * padded + d] *= shrink;
            }
            for (std::size_t j = keys; j < tile; ++j) row[j] = 0;
          });
          team.team_barrier();
          attention_tiles::team_tile_product(team, int(tile), int(padded), int(tile), s, int(tile),
                                             1, v, int(padded), o, int(padded), true);
        }
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q_count), [&](std::size_t i) {
          const T inverse = T(1) / l[i];
          for (std::size_t d = 0; d < padded; ++d) o[i * padded + d] *= inverse;
          lse(sh * g.len + q_first + i) = m[i] + kmath::log(l[i]);
        });
        team.team_barrier();
        store_tile(team, g, table, o, false, T(1), sh, q_first, q_count, a, 0);
      });
}

// dk and dv into dqkv: a team per (pair, key tile), over the query tiles at and below it.
template <class T>
void key_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                   const Packed<T>& table, const Matrix<T>& qkv, const Matrix<T>& a,
                   const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t tile = g.tile, padded = g.padded;
  const std::size_t scratch = FusedAttentionGeometry<T>::scratch_elements(tile, padded, false);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_key_gradients", team_policy<T>(space, pairs * g.tiles, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g);
        const std::size_t sh = t.pair, k_first = t.first, k_count = t.count;
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), tile,
                                 padded);
        T *const q = w.q, *const dout = w.dout, *const kt = w.kt, *const vt = w.vt;
        T *const p = w.p, *const ds = w.ds, *const tile_lse = w.lse, *const row_dots = w.row_dots;
        T *const dk = w.own[0], *const dv = w.own[1];
        load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, kt);
        load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true, vt);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * padded), [&](std::size_t e) {
          dk[e] = 0;
          dv[e] = 0;
        });
        for (std::size_t q_first = k_first; q_first < g.len; q_first += tile) {
          const std::size_t q_count = tile_rows(q_first, tile, g.len);
          team.team_barrier();  // the previous tile's products have read q and do
          load_query_tile(team, g, table, qkv, a, da, lse, sh, q_first, q_count, q, dout, tile_lse,
                          row_dots);
          team.team_barrier();
          probabilities_and_score_gradient(team, g, q, dout, kt, vt, tile_lse, row_dots, q_first,
                                           q_count, k_first, k_count, p, ds);
          add_key_gradients(team, g, p, ds, dout, q, dv, dk);
        }
        team.team_barrier();
        store_tile(team, g, table, dk, g.rope, T(1), sh, k_first, k_count, dqkv, g.width);
        store_tile(team, g, table, dv, false, T(1), sh, k_first, k_count, dqkv, 2 * g.width);
      });
}

// dq into dqkv: a team per (pair, query tile), over the key tiles at and below it.
template <class T>
void query_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                     const Packed<T>& table, const Matrix<T>& qkv, const Matrix<T>& a,
                     const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t tile = g.tile, padded = g.padded;
  const std::size_t scratch = FusedAttentionGeometry<T>::scratch_elements(tile, padded, false);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_query_gradients", team_policy<T>(space, pairs * g.tiles, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g);
        const std::size_t sh = t.pair, q_first = t.first, q_count = t.count;
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), tile,
                                 padded);
        T *const q = w.q, *const dout = w.dout, *const kt = w.kt, *const vt = w.vt;
        T *const p = w.p, *const ds = w.ds, *const tile_lse = w.lse, *const row_dots = w.row_dots;
        T *const dq = w.own[0], *const k = w.own[1];
        load_query_tile(team, g, table, qkv, a, da, lse, sh, q_first, q_count, q, dout, tile_lse,
                        row_dots);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * padded),
                             [&](std::size_t e) { dq[e] = 0; });
        for (std::size_t k_first = 0; k_first <= q_first; k_first += tile) {
          const std::size_t k_count = tile_rows(k_first, tile, g.len);
          team.team_barrier();  // the previous tile's products have read k, kt and vt
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), false, k);
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, kt);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true, vt);
          team.team_barrier();
          probabilities_and_score_gradient(team, g, q, dout, kt, vt, tile_lse, row_dots, q_first,
                                           q_count, k_first, k_count, p, ds);
          attention_tiles::team_tile_product(team, int(tile), int(padded), int(tile), ds, int(tile),
                                             1, k, int(padded), dq, int(padded), true);
        }
        team.team_barrier();
        store_tile(team, g, table, dq, g.rope, g.scale, sh, q_first, q_count, dqkv, 0);
      });
}

// dq, dk and dv into dqkv with a team per pair: for each key tile, the query tiles at and below
// it, dq's running sums kept in dqkv's q columns (turned and scaled once they are whole).
template <class T>
void pair_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                    const Packed<T>& table, const Matrix<T>& qkv, const Matrix<T>& a,
                    const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t tile = g.tile, padded = g.padded;
  const std::size_t scratch = FusedAttentionGeometry<T>::scratch_elements(tile, padded, true);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_backward", team_policy<T>(space, pairs, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const std::size_t sh = team.league_rank();
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), tile,
                                 padded);
        T *const q = w.q, *const dout = w.dout, *const kt = w.kt, *const vt = w.vt;
        T *const p = w.p, *const ds = w.ds, *const tile_lse = w.lse, *const row_dots = w.row_dots;
        T *const dq = w.own[0], *const k = w.own[1], *const dk = w.own[2], *const dv = w.own[3];
        for (std::size_t k_first = 0; k_first < g.len; k_first += tile) {
          const std::size_t k_count = tile_rows(k_first, tile, g.len);
          team.team_barrier();  // the previous key tile's dk and dv are stored
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), false, k);
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, kt);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true, vt);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * padded), [&](std::size_t e) {
            dk[e] = 0;
            dv[e] = 0;
          });
          for (std::size_t q_first = k_first; q_first < g.len; q_first += tile) {
            const std::size_t q_count = tile_rows(q_first, tile, g.len);
            team.team_barrier();  // the previous query tile's products are done, its dq stored
            load_query_tile(team, g, table, qkv, a, da, lse, sh, q_first, q_count, q, dout,
                            tile_lse, row_dots);
            // dq's sum so far (the first key tile starts it).
            load_tile(team, g, table, dqkv, 0, false, sh, q_first, k_first == 0 ? 0 : q_count, T(1),
                      false, dq);
            team.team_barrier();
            probabilities_and_score_gradient(team, g, q, dout, kt, vt, tile_lse, row_dots, q_first,
                                             q_count, k_first, k_count, p, ds);
            add_key_gradients(team, g, p, ds, dout, q, dv, dk);
            attention_tiles::team_tile_product(team, int(tile), int(padded), int(tile), ds,
                                               int(tile), 1, k, int(padded), dq, int(padded), true);
            team.team_barrier();
            store_tile(team, g, table, dq, false, T(1), sh, q_first, q_count, dqkv, 0);
          }
          team.team_barrier();
          store_tile(team, g, table, dk, g.rope, T(1), sh, k_first, k_count, dqkv, g.width);
          store_tile(team, g, table, dv, false, T(1), sh, k_first, k_count, dqkv, 2 * g.width);
        }
        // dq is whole: turned back and scaled, tile by tile.
        for (std::size_t q_first = 0; q_first < g.len; q_first += tile) {
          const std::size_t q_count = tile_rows(q_first, tile, g.len);
          team.team_barrier();
          load_tile(team, g, table, dqkv, 0, false, sh, q_first, q_count, T(1), false, dq);
          team.team_barrier();
          store_tile(team, g, table, dq, g.rope, g.scale, sh, q_first, q_count, dqkv, 0);
        }
      });
}

// dqkv from da, given the forward pass's qkv, a and lse: in the shape g names.
template <class T>
void backward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
              const Packed<T>& table, const Matrix<T>& qkv, const Matrix<T>& a, const Matrix<T>& da,
              const Buffer<T>& lse, const Matrix<T>& dqkv) {
  if (g.pair_teams) {
    pair_gradients(space, g, pairs, table, qkv, a, da, lse, dqkv);
    return;
  }
  key_gradients(space, g, pairs, table, qkv, a, da, lse, dqkv);
  query_gradients(space, g, pairs, table, qkv, a, da, lse, dqkv);
}

}  // namespace fused_attention_kernels

}  // namespace meshslice
