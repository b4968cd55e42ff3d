#pragma once
// One entry point for every distributed GEMM algorithm, over any executor.
#include <stdexcept>

#include "core/errors.hpp"
#include "gemm/algorithm.hpp"
#include "gemm/cannon.hpp"
#include "gemm/fsdp.hpp"
#include "gemm/meshslice.hpp"
#include "gemm/summa.hpp"
#include "gemm/tp1d.hpp"
#include "gemm/wang.hpp"

namespace meshslice {

// UserError unless a, b and c have the shard shapes `algorithm` keeps on this chip.
template <class Exec>
void check_shards(const Exec& ex, Algorithm algorithm, const GemmProblem& p,
                  const typename Exec::Mat& a, const typename Exec::Mat& b,
                  const typename Exec::Mat& c) {
  check_layout(algorithm, p, ex.mesh_rows(), ex.mesh_cols());
  const char names[] = {'A', 'B', 'C'};
  const typename Exec::Mat* shards[] = {&a, &b, &c};
  for (int m = 0; m < 3; ++m) {
    const ShardRegion want = shard_region(algorithm, p, names[m], ex.mesh_rows(), ex.mesh_cols(),
                                          ex.coord(Axis::row), ex.coord(Axis::col));
    require(shards[m]->extent(0) == want.rows && shards[m]->extent(1) == want.cols,
            algorithm_name(algorithm), " ", p.str(), ": the shard of ", names[m], " is ",
            shards[m]->extent(0), "x", shards[m]->extent(1), " but must be ", want.rows, "x",
            want.cols);
  }
}

// C = op(A) op(B) with `algorithm`, each operand sharded as shard_region() says. The only
// entry point: it checks the layout and shard shapes once, so the algorithms check only what
// is their own (slice counts, mesh squareness).
template <class Exec>
void run_gemm(Exec& ex, Algorithm algorithm, const GemmProblem& p, const typename Exec::Mat& a,
              const typename Exec::Mat& b, const typename Exec::Mat& c, const GemmOptions& o) {
  check_shards(ex, algorithm, p, a, b, c);
  require(o.slices >= 1 && o.block >= 1, "slice count S=", o.slices, " and block size B=",
          o.block, " must both be >= 1");
  // A single slice has no blocks to interleave: B only matters for S > 1.
  const GemmOptions options{o.slices, o.slices == 1 ? 1 : o.block};
  switch (algorithm) {
    case Algorithm::meshslice: return meshslice_gemm(ex, p, a, b, c, options);
    case Algorithm::collective: return meshslice_gemm(ex, p, a, b, c, GemmOptions{1, 1});
    case Algorithm::summa: return summa_gemm(ex, p, a, b, c, options);
    case Algorithm::cannon: return cannon_gemm(ex, p, a, b, c, options);
    case Algorithm::wang: return wang_gemm(ex, p, a, b, c, options);
    case Algorithm::tp1d: return tp1d_gemm(ex, p, a, b, c, options);
    case Algorithm::fsdp: return fsdp_gemm(ex, p, a, b, c, options);
  }
  throw std::logic_error("run_gemm: unknown algorithm");
}

}  // namespace meshslice
