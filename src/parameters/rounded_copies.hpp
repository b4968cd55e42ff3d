#pragma once
// The bf16 copies of a parameter set's weights (Parameter::rounded: a bf16 run's weight matrices,
// which their layers' GEMMs read in place of rounding the fp32 master weight at every use),
// written from the values in one launch: once the model is made or loaded, and after every
// optimizer step (and ZeRO-1's gathers). The same rounding each GEMM did, so the same numbers.
// A sharded master's row (Parameter::master_row) is rounded before its copy is gathered.
//
//     RoundedCopies<float> copies(params);   // once the set is made: its table, on the device
//     copies.refresh(space);                 // one launch, not fenced
//     RoundedCopies<float> rows = RoundedCopies<float>::master_rows(params);
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/bfloat16.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "parameters/multi_tensor.hpp"
#include "parameters/parameter_set.hpp"

namespace meshslice {

// A run of one weight's elements and where their bf16 copies go (the table lives on the device).
template <class T>
struct RoundingChunk {
  const T* from = nullptr;
  bfloat16* to = nullptr;
  std::size_t count = 0;
};

// A team per chunk (a thread on a CPU: the chunk's loop vectorizes).
template <class T>
void round_chunks(const ExecSpace& space, const Kokkos::View<RoundingChunk<T>*, MemSpace>& table) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "round_weights", Policy(space, static_cast<int>(table.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const RoundingChunk<T> c = table(team.league_rank());
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c.count),
                             [&](std::size_t i) { c.to[i] = element_cast<bfloat16>(c.from[i]); });
      });
}

template <class T>
class RoundedCopies {
 public:
  RoundedCopies() = default;
  // Each run's `count` elements rounded from `from` into `to`.
  explicit RoundedCopies(const std::vector<RoundingChunk<T>>& runs) {
    std::vector<RoundingChunk<T>> chunks;
    for (const RoundingChunk<T>& run : runs)
      for_each_chunk(run.count, [&](std::size_t first, std::size_t count) {
        chunks.push_back({run.from + first, run.to + first, count});
      });
    if (!chunks.empty()) table_ = device_table("rounding_chunks", chunks);
  }
  // Every copy of the set whose master is whole here (a sharded master's row is rounded apart:
  // master_rows()).
  explicit RoundedCopies(const ParameterSet<T>& set) : RoundedCopies(whole_masters(set)) {}
  // Every sharded master's row, rounded into the memory of its averaged gradient's row
  // (grad_row, read by then), which its all-gather sends from (model/parameter_update.hpp).
  static RoundedCopies master_rows(const ParameterSet<T>& set) {
    std::vector<RoundingChunk<T>> runs;
    for (const Parameter<T>& p : set)
      if (p.master_sharded() && p.master_row.data())  // a data-free run's: nothing to round
        runs.push_back({p.master_row.data(), reinterpret_cast<bfloat16*>(p.grad_row.data()),
                        elements(p.master_row)});
    return RoundedCopies(runs);
  }

  bool empty() const { return table_.extent(0) == 0; }

  // Every copy rounded from its value, as a kernel on `space` (nothing when there are none).
  void refresh(const ExecSpace& space) const {
    if (empty()) return;
    round_chunks(space, table_);
  }

 private:
  static std::vector<RoundingChunk<T>> whole_masters(const ParameterSet<T>& set) {
    std::vector<RoundingChunk<T>> runs;
    for (const Parameter<T>& p : set)
      if (p.rounded.data() && !p.master_sharded())
        runs.push_back({p.value.data(), p.rounded.data(), elements(p.value)});
    return runs;
  }

  Kokkos::View<RoundingChunk<T>*, MemSpace> table_;
};

}  // namespace meshslice
