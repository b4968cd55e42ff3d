#include "hardware/chip_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace meshslice::hw {

namespace {

std::size_t round_up(std::size_t x, std::size_t unit) { return (x + unit - 1) / unit * unit; }

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Tile extents worth trying for a padded extent: unit * 2^i below it, and the extent itself.
std::vector<std::size_t> tile_candidates(std::size_t padded, std::size_t unit) {
  std::vector<std::size_t> out;
  for (std::size_t t = unit; t < padded; t *= 2) out.push_back(t);
  out.push_back(padded);
  return out;
}

}  // namespace

std::size_t ChipModel::KeyHash::operator()(const Key& key) const {
  std::size_t h = std::hash<std::size_t>()(key.m);
  for (std::size_t v : {key.n, key.k, static_cast<std::size_t>(key.accumulate)})
    h = h * 1000003u ^ std::hash<std::size_t>()(v);
  return h;
}

ChipModel::TileCost ChipModel::tile_cost(std::size_t tm, std::size_t tn, std::size_t kp,
                                         std::size_t tk, bool accumulate,
                                         double core_bandwidth) const {
  const double e = p_.element_bytes;
  // Multiply of one K chunk: the chunk's weight blocks spread over the MXUs, each block a pass
  // of max(rows streamed, rows of the block's double-buffered load) cycles.
  auto multiply = [&](std::size_t chunk) {
    const std::size_t blocks = (chunk / p_.mxu_rows) * (tn / p_.mxu_cols);
    const std::size_t passes = ceil_div(blocks, p_.mxus_per_core);
    return passes * static_cast<double>(std::max<std::size_t>(tm, p_.mxu_rows)) / p_.clock_hz;
  };
  auto prefetch = [&](std::size_t chunk) {
    return static_cast<double>(tm * chunk + chunk * tn) * e / core_bandwidth;
  };
  const std::size_t full = kp / tk, rest = kp % tk;
  const double c_tile = static_cast<double>(tm * tn) * e / core_bandwidth;
  TileCost t;
  t.first_prefetch = prefetch(tk) + (accumulate ? c_tile : 0.0);
  // Chunk i multiplies while chunk i+1 arrives; the last chunk multiplies alone.
  if (full > 1) t.loop += (full - 1) * std::max(multiply(tk), prefetch(tk));
  if (rest > 0)
    t.loop += std::max(multiply(tk), prefetch(rest)) + multiply(rest);
  else
    t.loop += multiply(tk);
  t.multiply = full * multiply(tk) + (rest ? multiply(rest) : 0.0);
  t.fill_drain = static_cast<double>(p_.mxu_rows + p_.mxu_cols) / p_.clock_hz;
  t.write_back = c_tile;
  return t;
}

GemmTiming ChipModel::evaluate(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                               double hbm_bandwidth, const Tiles& tiles) const {
  GemmTiming t;
  t.flops = 2.0 * static_cast<double>(m) * n * k;
  t.tile_m = tiles.m;
  t.tile_n = tiles.n;
  t.tile_k = tiles.k;
  if (m == 0 || n == 0) return t;
  const std::size_t mp = round_up(m, p_.sublane_rows), np = round_up(n, p_.mxu_cols);
  const std::size_t kp = round_up(std::max<std::size_t>(k, 1), p_.mxu_rows);
  const std::size_t tm = tiles.m, tn = tiles.n, tk = tiles.k;
  const double core_bandwidth = hbm_bandwidth / p_.tensor_cores;
  // Tiles of up to four kinds: full ones and the remainders along M and N.
  const std::size_t rm = mp % tm, rn = np % tn, fm = mp / tm, fn = np / tn;
  struct Kind {
    std::size_t count;
    TileCost cost;
  };
  Kind kinds[4];
  int count = 0;
  kinds[count++] = {fm * fn, tile_cost(tm, tn, kp, tk, accumulate, core_bandwidth)};
  if (rm) kinds[count++] = {fn, tile_cost(rm, tn, kp, tk, accumulate, core_bandwidth)};
  if (rn) kinds[count++] = {fm, tile_cost(tm, rn, kp, tk, accumulate, core_bandwidth)};
  if (rm && rn) kinds[count++] = {1, tile_cost(rm, rn, kp, tk, accumulate, core_bandwidth)};
  // The slowest core finishes the GEMM. A core's share of a kind is the even split, and the
  // leftovers go round-robin over the cores, continuing from kind to kind.
  const std::size_t cores = static_cast<std::size_t>(p_.tensor_cores);
  for (std::size_t core = 0; core < cores; ++core) {
    double busy = 0;
    std::size_t next_leftover = 0;  // the core the next leftover tile goes to
    for (int i = 0; i < count; ++i) {
      const std::size_t leftovers = kinds[i].count % cores;
      const std::size_t share =
          kinds[i].count / cores + ((core + cores - next_leftover) % cores < leftovers);
      next_leftover = (next_leftover + leftovers) % cores;
      busy += share * kinds[i].cost.seconds();
    }
    t.seconds = std::max(t.seconds, busy);
  }
  t.hbm_bound = kinds[0].cost.loop > kinds[0].cost.multiply;
  return t;
}

GemmTiming ChipModel::plan(std::size_t m, std::size_t n, std::size_t k, bool accumulate) const {
  const std::size_t mp = round_up(m, p_.sublane_rows), np = round_up(n, p_.mxu_cols);
  const std::size_t kp = round_up(std::max<std::size_t>(k, 1), p_.mxu_rows);
  const std::size_t m_unit = std::min<std::size_t>(mp, round_up(p_.mxu_rows, p_.sublane_rows));
  const std::size_t k_max = static_cast<std::size_t>(p_.mxus_per_core) * p_.mxu_rows;
  const double e = p_.element_bytes, acc = p_.accumulator_bytes;
  GemmTiming best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (std::size_t tm : tile_candidates(mp, m_unit))
    for (std::size_t tn : tile_candidates(np, p_.mxu_cols))
      for (std::size_t tk : tile_candidates(std::min(kp, k_max), p_.mxu_rows)) {
        const double scratch = 2.0 * (tm * tk + tk * tn) * e + static_cast<double>(tm * tn) * acc;
        if (scratch > p_.scratchpad_bytes) continue;
        const GemmTiming t = evaluate(m, n, k, accumulate, p_.hbm_bandwidth, {tm, tn, tk});
        if (t.seconds < best.seconds) best = t;
      }
  if (!std::isfinite(best.seconds)) {
    // Even the smallest tiles do not fit: a machine description with a tiny scratchpad.
    throw MachineError("the scratchpad cannot hold the smallest GEMM tiles; increase "
                       "chip.scratchpad_mib_per_core");
  }
  return best;
}

GemmTiming ChipModel::gemm(std::size_t m, std::size_t n, std::size_t k, bool accumulate,
                           double hbm_bandwidth) const {
  const Key key{m, n, k, accumulate};
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, plan(m, n, k, accumulate)).first;
  if (hbm_bandwidth == p_.hbm_bandwidth) return it->second;
  const GemmTiming& planned = it->second;
  return evaluate(m, n, k, accumulate, hbm_bandwidth,
                  {planned.tile_m, planned.tile_n, planned.tile_k});
}

}  // namespace meshslice::hw
