#pragma once
// Causal multi-head attention as fused kernels, in the manner of FlashAttention-2: one launch
// for the forward pass and one or two for the backward pass, whatever the number of sequences,
// heads and rows. The shard layout is attention.hpp's (qkv: [q | k | v] of the chip's heads, a: the
// heads side by side); the kernels read and write it in place, so nothing is packed.
//
// A team takes a tile of query rows of one (sequence, head) pair, keeps it in scratch memory and
// streams the key tiles at or below the diagonal through (the tiles above it are skipped:
// causal; on a CPU, with at least as many pairs as threads, a team takes a whole pair and keeps
// its keys and values in scratch, loaded once, for each of its query tiles in turn); the softmax
// is the online one (a running maximum m and sum l per row), so the probabilities are never
// stored: the forward pass keeps each row's log-sum-exp lse = m + log l, and the backward pass
// recomputes p = exp(s - lse) tile by tile.
//   forward:   o = softmax(q k^T / sqrt(dim)) v, lse
//   backward:  D = rowsum(do * o); per pair of tiles p, dp = do v^T, ds = p * (dp - D),
//              dv += p^T do, dk += ds^T q, dq += ds k.
// The forward pass sums o, rescaled as the maximum grows, in scratch on a CPU and in its rows of
// the output on a GPU (each row has one team). The backward pass comes in two shapes. Where
// there are at least as many (sequence, head) pairs as the backend runs teams at once (a CPU), a
// team takes a whole pair (one launch) and keeps its q, do and dq in scratch: it walks the key
// tiles, and for each the query tiles at or below the diagonal, adding into dq as it goes; five
// tile products per pair of tiles.
// Elsewhere (a GPU, which needs many more teams) a team per key tile sums dk and dv in their rows
// of dqkv and another launch's team per query tile dq, each recomputing s and dp: seven
// products. Either way each gradient element has one writer, so there are no atomics and the
// results are the same on every run.
// RoPE turns q and k as they are loaded (and the gradients back once they are whole), and q is
// multiplied by 1/sqrt(dim) on the way in; in a bf16 run q, k and v arrive in bf16 and are
// widened to T there too (the tiles, the sums and the gradients stay T).
// On a GPU a team is 128 threads and its tiles fit the 40 KiB of shared memory Kokkos offers a
// team (CUDA's 48 KiB per block less Kokkos' own share): with head dimension 128 in float, 32
// rows forward and 16 backward. Their rows are one element longer than their data (kSkew), so
// that a warp reading a column of a tile hits 32 different banks.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/bfloat16.hpp"
#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "block/block_work.hpp"
#include "model/kernels/attention_tiles.hpp"
#include "model/kernels/rope_table.hpp"

namespace meshslice {

namespace fused_attention_kernels {

using attention_tiles::kHostBackend;
using attention_tiles::TileIn;
using attention_tiles::TileOut;
using TeamPolicy = Kokkos::TeamPolicy<ExecSpace>;
using Member = TeamPolicy::member_type;
template <class T>
using ScratchBuffer = Kokkos::View<T*, ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

constexpr int kDeviceTeam = 128;  // threads of a team on a GPU
// The micro-tile rows of the backward pass's p and ds products: on a GPU one, so that the two
// 16 x 16 tiles give each of a team's threads a micro-tile (with two rows a quarter of them
// worked, each product in turn).
constexpr int kSquareRows = kHostBackend ? attention_tiles::kMicroRows : 1;
constexpr std::size_t kSkew = kHostBackend ? 0 : 1;
// Threads that share a row's D = rowsum(do * o): on a GPU 8, so that a team's 128 threads share
// a tile's 16 rows of 128 columns (a row to a thread left 16 of them working).
constexpr std::size_t kDotChunks = kHostBackend ? 1 : 8;

}  // namespace fused_attention_kernels

// What a fused kernel needs to know of the shard, captured by value.
template <class T>
struct FusedAttentionGeometry {
  std::size_t len = 0, heads = 0, dim = 0, half = 0, width = 0;  // width: heads x dim
  std::size_t padded = 0;        // dim rounded up to the micro-tile's columns
  std::size_t forward_tile = 0;  // rows of the forward pass's query and key tiles
  std::size_t tile = 0;          // the backward pass's (both multiples of the micro-tiles)
  bool rope = false;
  T scale = 0;             // 1 / sqrt(dim)
  T lowest = 0;            // the running maximum's start
  bool pair_teams = true;  // the backward pass's shape: a team per pair, or per tile

  // Whether the forward pass also takes a team per pair (pair_forward): a CPU's only; a GPU's
  // forward keeps a team per query tile (tile_forward), whatever the backward pass's shape.
  KOKKOS_INLINE_FUNCTION bool forward_per_pair() const {
    return fused_attention_kernels::kHostBackend && pair_teams;
  }

  // A scratch tile's row strides: a row-major tile's (of `padded` columns) and a transposed or
  // square one's (of `tile` columns).
  KOKKOS_INLINE_FUNCTION std::size_t row_ld() const {
    return padded + fused_attention_kernels::kSkew;
  }
  KOKKOS_INLINE_FUNCTION static std::size_t square_ld(std::size_t tile) {
    return tile + fused_attention_kernels::kSkew;
  }
  KOKKOS_INLINE_FUNCTION std::size_t tiles(std::size_t tile) const {
    return (len + tile - 1) / tile;
  }

  // Scratch elements of a forward team: q, k^T then v in one share, the scores, each row's m,
  // l and rescale, and on a CPU o (fused_attention_kernels::tile_forward); a team per pair on a
  // CPU keeps the pair's k^T and v whole (pair_forward).
  std::size_t forward_scratch(std::size_t t) const {
    if (forward_per_pair()) {
      const std::size_t keys = pair_rows(t);
      return padded * square_ld(keys) + keys * row_ld() + 2 * t * row_ld() + t * square_ld(t) +
             3 * t;
    }
    return (fused_attention_kernels::kHostBackend ? 2 : 1) * t * row_ld() +
           std::max(t * row_ld(), padded * square_ld(t)) + t * square_ld(t) + 3 * t;
  }
  // Of a backward team: q, do, k^T, v^T, p, ds, the rows' lse, D and D's partial sums, for a
  // tile of queries; a team per pair keeps q, do, their rows' statistics and dq for all of the
  // pair's rows (pair_rows) and three row-major tiles more (k, dk, dv).
  std::size_t backward_scratch(std::size_t t) const {
    const std::size_t queries = pair_teams ? pair_rows(t) : t;
    return (pair_teams ? 3 : 2) * queries * row_ld() + (pair_teams ? 3 * t * row_ld() : 0) +
           2 * padded * square_ld(t) + 2 * t * square_ld(t) +
           (2 + fused_attention_kernels::kDotChunks) * queries;
  }
  // A sequence's rows rounded up to whole tiles.
  std::size_t pair_rows(std::size_t t) const { return tiles(t) * t; }
};

// The tiles for a shard: 64 rows (fewer for shorter sequences), each pass's halved (to a
// multiple of the micro-tiles) on a GPU until a team's scratch fits its shared memory or the
// tile is one micro-tile wide; a scratch that still does not fit goes to global memory
// (fused_attention_kernels::scratch_level). The backward pass takes a team per pair on a host
// backend with at least as many pairs as threads (`pair_teams`: forces either shape).
template <class T>
FusedAttentionGeometry<T> fused_attention_geometry(const AttentionShape& s, int pair_teams = -1) {
  using attention_tiles::round_up;
  constexpr bool host = fused_attention_kernels::kHostBackend;
  constexpr std::size_t columns = attention_tiles::micro_cols<T>();
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
  const std::size_t start = std::min<std::size_t>(64, round_up(s.len, columns));
  g.forward_tile = start;
  while (!host && g.forward_tile > columns &&
         g.forward_scratch(g.forward_tile) * sizeof(T) > team_shared_bytes)
    g.forward_tile = round_up(g.forward_tile / 2, columns);
  g.tile = start;
  while (!host && g.tile > columns && g.backward_scratch(g.tile) * sizeof(T) > team_shared_bytes)
    g.tile = round_up(g.tile / 2, columns);
  g.rope = s.rope;
  g.scale = T(1) / static_cast<T>(std::sqrt(static_cast<double>(s.dim)));
  g.lowest = -std::numeric_limits<T>::max();
  return g;
}

namespace fused_attention_kernels {

// The scratch level a team's `elements` take: 0 (a GPU's shared memory) where they fit, else 1
// (global memory, slower). A CPU's is memory either way.
template <class T>
int scratch_level(std::size_t elements) {
  return kHostBackend || ScratchBuffer<T>::shmem_size(elements) <=
                             static_cast<std::size_t>(TeamPolicy::scratch_size_max(0))
             ? 0
             : 1;
}

template <class T>
TeamPolicy team_policy(const ExecSpace& space, std::size_t league, std::size_t elements) {
  // The backend's own test, not kHostBackend: a GPU-shapes test build runs teams of one thread.
  TeamPolicy policy = kRunsOnHost ? TeamPolicy(space, static_cast<int>(league), Kokkos::AUTO)
                                  : TeamPolicy(space, static_cast<int>(league), kDeviceTeam);
  return policy.set_scratch_size(scratch_level<T>(elements),
                                 Kokkos::PerTeam(ScratchBuffer<T>::shmem_size(elements)));
}

// f(i, d) for each element of a rows x cols tile: on a CPU a thread walks whole rows (no index
// arithmetic per element: a division costs more than the work); on a GPU a thread per element,
// neighbours along a row (coalesced).
template <class F>
KOKKOS_INLINE_FUNCTION void for_each_tile_element(const Member& team, std::size_t rows,
                                                  std::size_t cols, const F& f) {
  if constexpr (kHostBackend) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](std::size_t i) {
      for (std::size_t d = 0; d < cols; ++d) f(i, d);
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * cols),
                         [&](std::size_t e) { f(e / cols, e % cols); });
  }
}

// The first row of pair sh's rows in the shard, and its first column in a third of qkv.
template <class T>
KOKKOS_INLINE_FUNCTION std::size_t first_token(const FusedAttentionGeometry<T>& g, std::size_t sh,
                                               std::size_t first) {
  return (sh / g.heads) * g.len + first;
}
template <class T>
KOKKOS_INLINE_FUNCTION std::size_t head_column(const FusedAttentionGeometry<T>& g, std::size_t sh) {
  return (sh % g.heads) * g.dim;
}

// Rows [first, first + count) of pair sh in src's columns from `col0` + head x dim, into a tile
// of `tile` rows with row stride ld: row-major (dst[i * ld + d]) or transposed (dst[d * ld + i]);
// turned by their positions with `turn` (RoPE) and multiplied by `factor`; zeros where the tile
// pads (a transposed tile's rows past dim are left as they are: no product reads them). src's
// elements are T, or bf16 (a bf16 run's q, k and v), widened to T as they are loaded.
template <class T, class S>
KOKKOS_INLINE_FUNCTION void load_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                      const Packed<T>& table, const Matrix<S>& src,
                                      std::size_t col0, bool turn, std::size_t sh,
                                      std::size_t first, std::size_t count, T factor,
                                      bool transposed, std::size_t tile, std::size_t ld, T* dst) {
  const std::size_t token0 = first_token(g, sh, first), col = col0 + head_column(g, sh);
  const std::size_t row_stride = transposed ? 1 : ld, col_stride = transposed ? ld : 1;
  const std::size_t end = transposed ? g.dim : g.padded;  // the columns a tile row holds
  if constexpr (kHostBackend) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](std::size_t i) {
      T* out = dst + i * row_stride;
      const std::size_t width = i < count ? g.dim : 0;
      if (width > 0 && turn) {
        const S* x = &src(token0 + i, col);
        for (std::size_t k = 0; k < g.half; ++k) {
          const auto y = attention_kernels::rope_turn(table, first + i, k, element_cast<T>(x[k]),
                                                      element_cast<T>(x[k + g.half]), false);
          out[k * col_stride] = y.first * factor;
          out[(k + g.half) * col_stride] = y.second * factor;
        }
      } else if (width > 0) {
        const S* x = &src(token0 + i, col);
        for (std::size_t d = 0; d < g.dim; ++d)
          out[d * col_stride] = element_cast<T>(x[d]) * factor;
      }
      for (std::size_t d = width; d < end; ++d) out[d * col_stride] = 0;
    });
  } else {
    // A thread per element (per pair of elements with RoPE), neighbours along a row.
    const std::size_t per_row = turn ? g.half : end;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * per_row), [&](std::size_t e) {
      const std::size_t i = e / per_row, k = e % per_row;
      T* out = dst + i * row_stride;
      if (!turn) {
        out[k * col_stride] =
            i < count && k < g.dim ? element_cast<T>(src(token0 + i, col + k)) * factor : T(0);
        return;
      }
      attention_kernels::TurnedPair<T> y{0, 0};
      if (i < count)
        y = attention_kernels::rope_turn(table, first + i, k,
                                         element_cast<T>(src(token0 + i, col + k)),
                                         element_cast<T>(src(token0 + i, col + k + g.half)), false);
      out[k * col_stride] = y.first * factor;
      out[(k + g.half) * col_stride] = y.second * factor;
    });
    if (turn && end > g.dim)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile * (end - g.dim)), [&](std::size_t e) {
        const std::size_t i = e / (end - g.dim), d = g.dim + e % (end - g.dim);
        dst[i * row_stride + d * col_stride] = 0;
      });
  }
}

// The first `count` rows of a row-major scratch tile (row stride ld) into dst's rows from pair
// sh's `first` and columns from col0 + head x dim, multiplied by `factor`; `turn_back` undoes
// RoPE's turn (a gradient).
template <class T>
KOKKOS_INLINE_FUNCTION void store_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                       const Packed<T>& table, const T* tile, std::size_t ld,
                                       bool turn_back, T factor, std::size_t sh, std::size_t first,
                                       std::size_t count, const Matrix<T>& dst, std::size_t col0) {
  const std::size_t token0 = first_token(g, sh, first), col = col0 + head_column(g, sh);
  for_each_tile_element(team, count, turn_back ? g.half : g.dim, [&](std::size_t i, std::size_t k) {
    const T* row = tile + i * ld;
    T* out = &dst(token0 + i, col);
    if (!turn_back) {
      out[k] = row[k] * factor;
      return;
    }
    const auto y = attention_kernels::rope_turn(table, first + i, k, row[k], row[k + g.half], true);
    out[k] = y.first * factor;
    out[k + g.half] = y.second * factor;
  });
}

// A gradient summed in place in dst's rows [first, first + count) of pair sh from column col0:
// turned back (RoPE) and multiplied by `factor`, in place.
template <class T>
KOKKOS_INLINE_FUNCTION void finish_in_place(const Member& team, const FusedAttentionGeometry<T>& g,
                                            const Packed<T>& table, bool turn_back, T factor,
                                            std::size_t sh, std::size_t first, std::size_t count,
                                            const Matrix<T>& dst, std::size_t col0) {
  if (!turn_back && factor == T(1)) return;
  const T* rows = &dst(first_token(g, sh, first), col0 + head_column(g, sh));
  store_tile(team, g, table, rows, dst.stride(0), turn_back, factor, sh, first, count, dst, col0);
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
KOKKOS_INLINE_FUNCTION PairTile pair_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                          std::size_t tile) {
  const std::size_t rank = static_cast<std::size_t>(team.league_rank()), tiles = g.tiles(tile);
  const std::size_t first = (rank % tiles) * tile;
  return {rank / tiles, first, tile_rows(first, tile, g.len)};
}

// A backward team's scratch, as FusedAttentionGeometry::backward_scratch counts it: q and do
// (row-major) of a query tile, or of all of a pair's rows for a team per pair; the key tile's k^T
// and v^T, p and ds; the query rows' log-sum-exps, D and D's partial sums; then a team per pair's
// own: dq of all its rows and the k, dk and dv tiles.
template <class T>
struct BackwardTiles {
  std::size_t tile, row_ld, square_ld;
  T *q, *dout, *kt, *vt, *p, *ds, *lse, *row_dots, *partial_dots;
  T* own[4];  // a team per pair's: dq for all of the pair's rows, then the k, dk and dv tiles
  // `queries`: the rows q, do and their statistics hold (a tile's, or a pair's).
  KOKKOS_INLINE_FUNCTION BackwardTiles(T* base, const FusedAttentionGeometry<T>& g,
                                       std::size_t queries)
      : tile(g.tile), row_ld(g.row_ld()), square_ld(g.square_ld(g.tile)) {
    const std::size_t rows = queries * row_ld, transposed = g.padded * square_ld;
    q = base;
    dout = q + rows;
    kt = dout + rows;
    vt = kt + transposed;
    p = vt + transposed;
    ds = p + tile * square_ld;
    lse = ds + tile * square_ld;
    row_dots = lse + queries;
    partial_dots = row_dots + queries;
    own[0] = partial_dots + kDotChunks * queries;
    own[1] = own[0] + rows;
    for (int i = 2; i < 4; ++i) own[i] = own[i - 1] + tile * row_ld;
  }

  // The same tiles with q, do and their statistics those of the query tile at row `first` of
  // the pair's (a team per pair's).
  KOKKOS_INLINE_FUNCTION BackwardTiles query_tile(std::size_t first) const {
    BackwardTiles t = *this;
    t.q += first * row_ld;
    t.dout += first * row_ld;
    t.lse += first;
    t.row_dots += first;
    return t;
  }
};

// p = exp(s - lse) over each row's causal keys, 0 elsewhere (the backward pass's recomputed
// probabilities, in place of the scores).
template <class T>
KOKKOS_INLINE_FUNCTION void recompute_probabilities(const Member& team, const BackwardTiles<T>& w,
                                                    std::size_t q_first, std::size_t q_count,
                                                    std::size_t k_first, std::size_t k_count) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w.tile), [&](std::size_t i) {
    T* row = w.p + i * w.square_ld;
    const std::size_t keys = causal_keys(i, q_first, q_count, k_first, k_count);
    for (std::size_t j = 0; j < keys; ++j) row[j] = kmath::fast_exp(row[j] - w.lse[i]);
    for (std::size_t j = keys; j < w.tile; ++j) row[j] = 0;
  });
}

// ds = p * (ds - D): the scores' gradient from the probabilities' (ds holds do v^T).
template <class T>
KOKKOS_INLINE_FUNCTION void score_gradient(const Member& team, const BackwardTiles<T>& w) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w.tile), [&](std::size_t i) {
    const T* p_row = w.p + i * w.square_ld;
    T* ds_row = w.ds + i * w.square_ld;
    const T dot = w.row_dots[i];
    for (std::size_t j = 0; j < w.tile; ++j) ds_row[j] = p_row[j] * (ds_row[j] - dot);
  });
}

// What a backward team needs of `rows` query rows from `first` (a tile's, or a whole pair's):
// q (turned and scaled), do, and their log-sum-exps and D = rowsum(do * o), kDotChunks threads
// to a row, their partial sums added in a fixed order.
template <class T, class S>
KOKKOS_INLINE_FUNCTION void load_query_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                            const Packed<T>& table, const Matrix<S>& qkv,
                                            const Matrix<T>& a, const Matrix<T>& da,
                                            const Buffer<T>& lse, std::size_t sh, std::size_t first,
                                            std::size_t count, std::size_t rows,
                                            const BackwardTiles<T>& w) {
  load_tile(team, g, table, qkv, 0, g.rope, sh, first, count, g.scale, false, rows, w.row_ld, w.q);
  load_tile(team, g, table, da, 0, false, sh, first, count, T(1), false, rows, w.row_ld, w.dout);
  team.team_barrier();
  const std::size_t token0 = first_token(g, sh, first), col = head_column(g, sh);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * kDotChunks), [&](std::size_t e) {
    const std::size_t i = e / kDotChunks, chunk = e % kDotChunks;
    T dot = 0;
    if (i < count)
      for (std::size_t d = chunk; d < g.dim; d += kDotChunks)
        dot += w.dout[i * w.row_ld + d] * a(token0 + i, col + d);
    w.partial_dots[e] = dot;
    if (chunk == 0) w.lse[i] = i < count ? lse(sh * g.len + first + i) : T(0);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](std::size_t i) {
    T dot = 0;
    for (std::size_t chunk = 0; chunk < kDotChunks; ++chunk)
      dot += w.partial_dots[i * kDotChunks + chunk];
    w.row_dots[i] = dot;
  });
}

// For a query tile (q, do and its statistics loaded) and a key tile (k^T, v^T): the
// probabilities p = exp(q k^T - lse) and the scores' gradient ds = p * (do v^T - D).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void probabilities_and_score_gradient(
    const Member& team, const FusedAttentionGeometry<T>& g, const BackwardTiles<T>& w,
    std::size_t q_first, std::size_t q_count, std::size_t k_first, std::size_t k_count) {
  const int tile = int(w.tile), row_ld = int(w.row_ld), square_ld = int(w.square_ld);
  const attention_tiles::TileProduct<T> products[2] = {
      {{w.q, row_ld, 1}, {w.kt, square_ld, 1}, {w.p, square_ld, tile, tile}},
      {{w.dout, row_ld, 1}, {w.vt, square_ld, 1}, {w.ds, square_ld, tile, tile}}};
  attention_tiles::team_tile_products<kSquareRows>(team, tile, tile, int(g.dim), products, 2,
                                                   false);
  team.team_barrier();
  recompute_probabilities(team, w, q_first, q_count, k_first, k_count);
  team.team_barrier();
  score_gradient(team, w);
  team.team_barrier();
}

// dv (+)= p^T do and dk (+)= ds^T q (A's rows are the tiles' columns).
template <class T>
KOKKOS_INLINE_FUNCTION void add_key_gradients(const Member& team,
                                              const FusedAttentionGeometry<T>& g,
                                              const BackwardTiles<T>& w, const TileOut<T>& dv,
                                              const TileOut<T>& dk, bool accumulate) {
  const int tile = int(w.tile), row_ld = int(w.row_ld), square_ld = int(w.square_ld);
  attention_tiles::team_tile_product(team, tile, int(g.padded), tile, TileIn<T>{w.p, 1, square_ld},
                                     TileIn<T>{w.dout, row_ld, 1}, dv, accumulate);
  attention_tiles::team_tile_product(team, tile, int(g.padded), tile, TileIn<T>{w.ds, 1, square_ld},
                                     TileIn<T>{w.q, row_ld, 1}, dk, accumulate);
}

// The rows [first, first + count) of pair sh in dst from column col0 + head x dim, as a tile
// product's output.
template <class T>
KOKKOS_INLINE_FUNCTION TileOut<T> rows_out(const FusedAttentionGeometry<T>& g, const Matrix<T>& dst,
                                           std::size_t col0, std::size_t sh, std::size_t first,
                                           std::size_t count, const T* row_scale = nullptr) {
  return {&dst(first_token(g, sh, first), col0 + head_column(g, sh)), int(dst.stride(0)),
          int(count), int(g.dim), row_scale};
}

// The online softmax over the scores s of a query tile against a key tile: each row's new
// maximum rescales its sum l and (through shrink) its output so far, and s becomes the tile's
// probabilities, 0 past each row's causal keys.
template <class T>
KOKKOS_INLINE_FUNCTION void online_softmax(const Member& team, std::size_t tile,
                                           std::size_t square_ld, T* s, T* m, T* l, T* shrink,
                                           std::size_t q_first, std::size_t q_count,
                                           std::size_t k_first, std::size_t k_count) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](std::size_t i) {
    T* row = s + i * square_ld;
    const std::size_t keys = causal_keys(i, q_first, q_count, k_first, k_count);
    T factor = 1;
    if (keys > 0) {
      const T top = fold_in_lanes(keys, row[0], RowValues<T>{row}, FoldMax());
      const T new_max = top > m[i] ? top : m[i];
      const T sum = fold_in_lanes(keys, T(0), ExpInPlace<T>{row, new_max}, FoldSum());
      factor = kmath::fast_exp(m[i] - new_max);
      l[i] = l[i] * factor + sum;
      m[i] = new_max;
    }
    shrink[i] = factor;
    for (std::size_t j = keys; j < tile; ++j) row[j] = 0;
  });
}

// A query tile's start: q loaded (turned and scaled), each row's running maximum and sum reset.
template <class T, class S>
KOKKOS_INLINE_FUNCTION void start_query_tile(const Member& team, const FusedAttentionGeometry<T>& g,
                                             const Packed<T>& table, const Matrix<S>& qkv,
                                             std::size_t sh, std::size_t q_first,
                                             std::size_t q_count, std::size_t tile, T* q, T* m,
                                             T* l) {
  load_tile(team, g, table, qkv, 0, g.rope, sh, q_first, q_count, g.scale, false, tile, g.row_ld(),
            q);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](std::size_t i) {
    m[i] = g.lowest;
    l[i] = 0;
  });
}

// A query tile's end: its rows' lse = m + log l, and o divided by l (in o's memory; on a CPU
// then stored into a's rows).
template <class T>
KOKKOS_INLINE_FUNCTION void finish_query_tile(const Member& team,
                                              const FusedAttentionGeometry<T>& g,
                                              const Packed<T>& table, const Buffer<T>& lse,
                                              const Matrix<T>& a, std::size_t sh,
                                              std::size_t q_first, std::size_t q_count, T* m, T* l,
                                              T* shrink, const TileOut<T>& o) {
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q_count), [&](std::size_t i) {
    lse(sh * g.len + q_first + i) = m[i] + kmath::log(l[i]);
    shrink[i] = T(1) / l[i];
  });
  team.team_barrier();
  for_each_tile_element(team, q_count, g.dim,
                        [&](std::size_t i, std::size_t d) { o.data[i * o.ld + d] *= shrink[i]; });
  if constexpr (kHostBackend) {
    team.team_barrier();
    store_tile(team, g, table, o.data, std::size_t(o.ld), false, T(1), sh, q_first, q_count, a, 0);
  }
}

// a and lse from qkv (its elements T or bf16): a team per (pair, query tile).
template <class T, class S>
void tile_forward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                  const Packed<T>& table, const Matrix<S>& qkv, const Buffer<T>& lse,
                  const Matrix<T>& a) {
  const std::size_t tile = g.forward_tile, padded = g.padded, row_ld = g.row_ld(),
                    square_ld = g.square_ld(tile);
  const std::size_t scratch = g.forward_scratch(tile),
                    kv_elements = std::max(tile * row_ld, padded * square_ld);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_forward", team_policy<T>(space, pairs * g.tiles(tile), scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g, tile);
        const std::size_t sh = t.pair, q_first = t.first, q_count = t.count;
        ScratchBuffer<T> buffer(team.team_scratch(level), scratch);
        T* const q = buffer.data();
        T* const kv = q + tile * row_ld;  // k^T, then v
        T* const s = kv + kv_elements;
        T* const m = s + tile * square_ld;
        T* const l = m + tile;
        T* const shrink = l + tile;
        // o sums in a's rows on a GPU (its shared memory holds no more), in scratch on a CPU
        // (a's rows, a hidden size apart, would share cache sets; the fused forward pass took
        // 1.6x as long there).
        T* const o_tile = kHostBackend ? shrink + tile : nullptr;
        const TileOut<T> o = kHostBackend
                                 ? TileOut<T>{o_tile, int(row_ld), int(tile), int(padded), shrink}
                                 : rows_out(g, a, 0, sh, q_first, q_count, shrink);
        start_query_tile(team, g, table, qkv, sh, q_first, q_count, tile, q, m, l);
        for (std::size_t k_first = 0; k_first <= q_first; k_first += tile) {
          const std::size_t k_count = tile_rows(k_first, tile, g.len);
          team.team_barrier();  // q is loaded; the previous tile's o += p v has read v
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, tile,
                    square_ld, kv);
          team.team_barrier();
          attention_tiles::team_tile_product(
              team, int(tile), int(tile), int(g.dim), TileIn<T>{q, int(row_ld), 1},
              TileIn<T>{kv, int(square_ld), 1}, TileOut<T>{s, int(square_ld), int(tile), int(tile)},
              false);
          team.team_barrier();
          online_softmax(team, tile, square_ld, s, m, l, shrink, q_first, q_count, k_first,
                         k_count);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), false,
                    tile, row_ld, kv);
          team.team_barrier();
          // The first key tile starts o: a's rows hold anything before.
          attention_tiles::team_tile_product(team, int(tile), int(padded), int(tile),
                                             TileIn<T>{s, int(square_ld), 1},
                                             TileIn<T>{kv, int(row_ld), 1}, o, k_first > 0);
        }
        finish_query_tile(team, g, table, lse, a, sh, q_first, q_count, m, l, shrink, o);
      });
}

// The same with a team per pair on a CPU (pair_teams): the pair's k^T and v are loaded once
// into scratch, not once for every query tile that reads them (the loads of k^T, a transpose,
// took a third of the forward pass's time).
template <class T, class S>
void pair_forward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                  const Packed<T>& table, const Matrix<S>& qkv, const Buffer<T>& lse,
                  const Matrix<T>& a) {
  const std::size_t tile = g.forward_tile, padded = g.padded, row_ld = g.row_ld(),
                    square_ld = g.square_ld(tile), keys = g.pair_rows(tile),
                    keys_ld = g.square_ld(keys);
  const std::size_t scratch = g.forward_scratch(tile);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_forward", team_policy<T>(space, pairs, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const std::size_t sh = team.league_rank();
        ScratchBuffer<T> buffer(team.team_scratch(level), scratch);
        T* const kt = buffer.data();         // padded x keys: the pair's k^T
        T* const v = kt + padded * keys_ld;  // keys x row_ld
        T* const q = v + keys * row_ld;      // a query tile
        T* const s = q + tile * row_ld;
        T* const m = s + tile * square_ld;
        T* const l = m + tile;
        T* const shrink = l + tile;
        T* const o_tile = shrink + tile;
        const TileOut<T> o{o_tile, int(row_ld), int(tile), int(padded), shrink};
        load_tile(team, g, table, qkv, g.width, g.rope, sh, 0, g.len, T(1), true, keys, keys_ld,
                  kt);
        load_tile(team, g, table, qkv, 2 * g.width, false, sh, 0, g.len, T(1), false, keys, row_ld,
                  v);
        for (std::size_t q_first = 0; q_first < g.len; q_first += tile) {
          const std::size_t q_count = tile_rows(q_first, tile, g.len);
          team.team_barrier();  // the previous query tile's output is stored
          start_query_tile(team, g, table, qkv, sh, q_first, q_count, tile, q, m, l);
          for (std::size_t k_first = 0; k_first <= q_first; k_first += tile) {
            const std::size_t k_count = tile_rows(k_first, tile, g.len);
            team.team_barrier();  // q is loaded; the previous tile's o += p v has read s
            attention_tiles::team_tile_product(
                team, int(tile), int(tile), int(g.dim), TileIn<T>{q, int(row_ld), 1},
                TileIn<T>{kt + k_first, int(keys_ld), 1},
                TileOut<T>{s, int(square_ld), int(tile), int(tile)}, false);
            team.team_barrier();
            online_softmax(team, tile, square_ld, s, m, l, shrink, q_first, q_count, k_first,
                           k_count);
            team.team_barrier();
            attention_tiles::team_tile_product(
                team, int(tile), int(padded), int(tile), TileIn<T>{s, int(square_ld), 1},
                TileIn<T>{v + k_first * row_ld, int(row_ld), 1}, o, k_first > 0);
          }
          finish_query_tile(team, g, table, lse, a, sh, q_first, q_count, m, l, shrink, o);
        }
      });
}

// a and lse from qkv: in the shape g names.
template <class T, class S>
void forward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
             const Packed<T>& table, const Matrix<S>& qkv, const Buffer<T>& lse,
             const Matrix<T>& a) {
  if constexpr (kHostBackend) {
    if (g.forward_per_pair()) return pair_forward(space, g, pairs, table, qkv, lse, a);
  }
  tile_forward(space, g, pairs, table, qkv, lse, a);
}

// dk and dv summed in their rows of dqkv: a team per (pair, key tile), over the query tiles at
// and below it.
template <class T, class S>
void key_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                   const Packed<T>& table, const Matrix<S>& qkv, const Matrix<T>& a,
                   const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t scratch = g.backward_scratch(g.tile);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_key_gradients", team_policy<T>(space, pairs * g.tiles(g.tile), scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g, g.tile);
        const std::size_t sh = t.pair, k_first = t.first, k_count = t.count;
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), g,
                                 g.tile);
        load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, w.tile,
                  w.square_ld, w.kt);
        load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true, w.tile,
                  w.square_ld, w.vt);
        const TileOut<T> dk = rows_out(g, dqkv, g.width, sh, k_first, k_count),
                         dv = rows_out(g, dqkv, 2 * g.width, sh, k_first, k_count);
        for (std::size_t q_first = k_first; q_first < g.len; q_first += w.tile) {
          const std::size_t q_count = tile_rows(q_first, w.tile, g.len);
          team.team_barrier();  // the previous tile's products have read q and do
          load_query_tile(team, g, table, qkv, a, da, lse, sh, q_first, q_count, w.tile, w);
          team.team_barrier();
          probabilities_and_score_gradient(team, g, w, q_first, q_count, k_first, k_count);
          // The first query tile starts dk and dv: dqkv's rows hold anything before.
          add_key_gradients(team, g, w, dv, dk, q_first > k_first);
        }
        team.team_barrier();
        finish_in_place(team, g, table, g.rope, T(1), sh, k_first, k_count, dqkv, g.width);
      });
}

// dq summed in its rows of dqkv: a team per (pair, query tile), over the key tiles at and below
// it.
template <class T, class S>
void query_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                     const Packed<T>& table, const Matrix<S>& qkv, const Matrix<T>& a,
                     const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t scratch = g.backward_scratch(g.tile);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_query_gradients", team_policy<T>(space, pairs * g.tiles(g.tile), scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const PairTile t = pair_tile(team, g, g.tile);
        const std::size_t sh = t.pair, q_first = t.first, q_count = t.count;
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), g,
                                 g.tile);
        const int tile = int(w.tile), square_ld = int(w.square_ld);
        load_query_tile(team, g, table, qkv, a, da, lse, sh, q_first, q_count, w.tile, w);
        const TileOut<T> dq = rows_out(g, dqkv, 0, sh, q_first, q_count);
        for (std::size_t k_first = 0; k_first <= q_first; k_first += w.tile) {
          const std::size_t k_count = tile_rows(k_first, w.tile, g.len);
          team.team_barrier();  // the previous tile's products have read k^T and v^T
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, w.tile,
                    w.square_ld, w.kt);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true,
                    w.tile, w.square_ld, w.vt);
          team.team_barrier();
          probabilities_and_score_gradient(team, g, w, q_first, q_count, k_first, k_count);
          // dq += ds k, k read through k^T; the first key tile starts dq.
          attention_tiles::team_tile_product(team, tile, int(g.padded), tile,
                                             TileIn<T>{w.ds, square_ld, 1},
                                             TileIn<T>{w.kt, 1, square_ld}, dq, k_first > 0);
        }
        team.team_barrier();
        finish_in_place(team, g, table, g.rope, g.scale, sh, q_first, q_count, dqkv, 0);
      });
}

// dq, dk and dv into dqkv with a team per pair: the pair's q, do, their rows' statistics and dq's
// running sums stay in the team's scratch (loaded once, dq stored once it is whole, turned and
// scaled), and for each key tile the query tiles at and below it add into dq, dk and dv. (Loading
// q and do and storing dq for every pair of tiles took half of this kernel's time on a CPU.)
template <class T, class S>
void pair_gradients(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
                    const Packed<T>& table, const Matrix<S>& qkv, const Matrix<T>& a,
                    const Matrix<T>& da, const Buffer<T>& lse, const Matrix<T>& dqkv) {
  const std::size_t scratch = g.backward_scratch(g.tile), rows = g.pair_rows(g.tile);
  const int level = scratch_level<T>(scratch);
  Kokkos::parallel_for(
      "attention_fused_backward", team_policy<T>(space, pairs, scratch),
      KOKKOS_LAMBDA(const Member& team) {
        const std::size_t sh = team.league_rank();
        const BackwardTiles<T> w(ScratchBuffer<T>(team.team_scratch(level), scratch).data(), g,
                                 rows);
        const std::size_t tile = w.tile, row_ld = w.row_ld;
        T *const dq = w.own[0], *const k = w.own[1], *const dk = w.own[2], *const dv = w.own[3];
        const TileOut<T> dk_out{dk, int(row_ld), int(tile), int(g.padded)},
            dv_out{dv, int(row_ld), int(tile), int(g.padded)};
        load_query_tile(team, g, table, qkv, a, da, lse, sh, 0, g.len, rows, w);
        for (std::size_t k_first = 0; k_first < g.len; k_first += tile) {
          const std::size_t k_count = tile_rows(k_first, tile, g.len);
          team.team_barrier();  // the previous key tile's dk and dv are stored
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), false, tile,
                    row_ld, k);
          load_tile(team, g, table, qkv, g.width, g.rope, sh, k_first, k_count, T(1), true, tile,
                    w.square_ld, w.kt);
          load_tile(team, g, table, qkv, 2 * g.width, false, sh, k_first, k_count, T(1), true, tile,
                    w.square_ld, w.vt);
          for (std::size_t q_first = k_first; q_first < g.len; q_first += tile) {
            const std::size_t q_count = tile_rows(q_first, tile, g.len);
            const BackwardTiles<T> wq = w.query_tile(q_first);
            team.team_barrier();  // the previous query tile's products are done
            probabilities_and_score_gradient(team, g, wq, q_first, q_count, k_first, k_count);
            add_key_gradients(team, g, wq, dv_out, dk_out, q_first > k_first);
            // dq += ds k; the first key tile, which every query tile sees, starts it.
            attention_tiles::team_tile_product(
                team, int(tile), int(g.padded), int(tile), TileIn<T>{w.ds, int(w.square_ld), 1},
                TileIn<T>{k, int(row_ld), 1},
                TileOut<T>{dq + q_first * row_ld, int(row_ld), int(tile), int(g.padded)},
                k_first > 0);
          }
          team.team_barrier();
          store_tile(team, g, table, dk, row_ld, g.rope, T(1), sh, k_first, k_count, dqkv, g.width);
          store_tile(team, g, table, dv, row_ld, false, T(1), sh, k_first, k_count, dqkv,
                     2 * g.width);
        }
        team.team_barrier();
        store_tile(team, g, table, dq, row_ld, g.rope, g.scale, sh, 0, g.len, dqkv, 0);
      });
}

// dqkv from da, given the forward pass's qkv (its elements T or bf16), a and lse: in the shape g
// names.
template <class T, class S>
void backward(const ExecSpace& space, const FusedAttentionGeometry<T>& g, std::size_t pairs,
              const Packed<T>& table, const Matrix<S>& qkv, const Matrix<T>& a, const Matrix<T>& da,
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
