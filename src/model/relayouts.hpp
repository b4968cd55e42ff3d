#pragma once
// The model's re-layouts: a T x width activation moved between the standard layout (tokens over
// mesh rows, width over mesh columns) and the transposed one (width over rows, tokens over
// columns) by a block transpose over the tensor-parallel ring (comm/block_transpose.hpp). Each
// shape is planned once; each run goes through the executor's communicate() with what the
// busiest chip sends (the emulated time) and is counted for the step summary.
//
//     Relayouts<Exec> relayouts(ex, tokens);
//     relayouts.plan(width);                                 // both ways; sizes checked now
//     relayouts.run(src, Layout::standard, width, dst);      // dst = src^T
//     const Mat& in = relayouts.in_layout(x, want, width, staging);   // x, or x^T in staging
//     relayouts.produce_into(made, wanted, width, staging, dst, [&](const Mat& m) { ... });
#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <utility>

#include "comm/block_transpose.hpp"
#include "core/kokkos_types.hpp"
#include "exec/caller_work.hpp"
#include "model/layer_plan.hpp"

namespace meshslice {

// What one re-layout costs: the elements the busiest chip of the mesh sends (a blocking
// all-to-all ends with its slowest exchange, so every chip's takes as long: the emulated time),
// and those this chip sends.
struct RelayoutCost {
  double busiest = 0, own = 0;
};

// Re-layouts run so far and what they sent (the step summary reports them).
struct RelayoutCount {
  std::size_t count = 0;
  double bytes = 0;
};

template <class Exec>
class Relayouts {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  Relayouts(Exec& ex, std::size_t tokens) : ex_(ex), tokens_(tokens) {}

  // Plans the re-layouts of a T x width activation both ways (a data-free executor's model only
  // computes their cost).
  void plan(std::size_t width) {
    cost(Layout::standard, width);
    cost(Layout::transposed, width);
  }

  // dst = src^T, from `from` layout to the other.
  void run(const Mat& src, Layout from, std::size_t width, const Mat& dst) {
    const RelayoutCost& c = cost(from, width);
    ex_.communicate("relayout", Axis::tp, {CommWork::all_to_all, c.busiest},
                    [&] { transpose_for(from, width).run(ex_.compute_space(), src, dst); });
    count_.count += 1;
    count_.bytes += c.own * sizeof(T);
  }

  // src (standard) in `want`: src itself, or its re-layout into dst.
  const Mat& in_layout(const Mat& src, Layout want, std::size_t width, const Mat& dst) {
    if (want == Layout::standard) return src;
    run(src, Layout::standard, width, dst);
    return dst;
  }

  // produce(m) writes a tensor in layout `made` into m; it lands in dst, which wants layout
  // `wanted`: written there directly, or into `staging` and re-laid out into dst.
  template <class Produce>
  void produce_into(Layout made, Layout wanted, std::size_t width, const Mat& staging,
                    const Mat& dst, Produce&& produce) {
    if (made == wanted) return produce(dst);
    produce(staging);
    run(staging, made, width, dst);
  }

  const RelayoutCount& count() const { return count_; }
  // What the planned transposes hold.
  std::size_t workspace_bytes() const {
    std::size_t bytes = 0;
    for (const auto& [key, transpose] : transposes_) bytes += transpose->bytes();
    return bytes;
  }

 private:
  const RelayoutCost& cost(Layout from, std::size_t width) {
    auto [it, made] = costs_.try_emplace({from == Layout::standard, width});
    if (!made) return it->second;
    const std::size_t rows = from == Layout::standard ? tokens_ : width;
    const std::size_t cols = from == Layout::standard ? width : tokens_;
    const int pr = ex_.mesh_rows(), pc = ex_.mesh_cols();
    RelayoutCost& c = it->second;
    for (int i = 0; i < pr; ++i)
      for (int j = 0; j < pc; ++j)
        c.busiest = std::max(c.busiest, static_cast<double>(BlockTranspose<T>::elements_sent(
                                            rows, cols, pr, pc, i, j)));
    if constexpr (Exec::holds_data)
      c.own = static_cast<double>(transpose_for(from, width).elements_sent());
    else
      c.own = static_cast<double>(BlockTranspose<T>::elements_sent(
          rows, cols, pr, pc, ex_.coord(Axis::row), ex_.coord(Axis::col)));
    return c;
  }

  // The planned transpose of a T x width activation out of layout `from` (made on first use).
  BlockTranspose<T>& transpose_for(Layout from, std::size_t width) {
    const auto key =
        from == Layout::standard ? std::make_pair(tokens_, width) : std::make_pair(width, tokens_);
    auto& slot = transposes_[key];
    if (!slot) {
      bool staged = false;  // a data-free executor moves nothing through MPI
      if constexpr (Exec::holds_data) staged = ex_.real().staged();
      slot = std::make_unique<BlockTranspose<T>>(ex_.torus(), key.first, key.second, staged);
    }
    return *slot;
  }

  Exec& ex_;
  std::size_t tokens_;
  std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<BlockTranspose<T>>> transposes_;
  std::map<std::pair<bool, std::size_t>, RelayoutCost> costs_;  // (from standard, width)
  RelayoutCount count_;
};

}  // namespace meshslice
