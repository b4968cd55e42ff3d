#pragma once
// Element-wise updates of many tensors in one launch (as PyTorch's fused, multi-tensor AdamW):
// a table of chunks, each a run of at most kChunkElements contiguous elements of one tensor with
// its gradient and optimizer state, made once on the host and copied to the device; a team per
// chunk walks its elements. A step of the optimizer is then one launch however many parameters
// the model has, instead of one per parameter (each a few microseconds of a GPU's latency).
//
//     MultiTensorChunks<float> chunks(tensors);         // once: the table, on the device
//     multi_tensor_for_each("adamw_update", space, chunks, element);  // element(chunk, i)
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/fold_in_lanes.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

// One tensor to update: its values, gradient and up to two state tensors of the same shape, all
// contiguous; `decays` chooses between the step's two sets of scalars (weight decay or none).
// A tensor only read (a sum of squares) has no gradient or state.
template <class T>
struct MultiTensorEntry {
  Matrix<T> value, grad;
  std::vector<Matrix<T>> state;
  bool decays = false;
};

// A run of one tensor's elements, by pointer (the table lives in device memory).
template <class T>
struct TensorChunk {
  T* value = nullptr;
  const T* grad = nullptr;
  T* state[2] = {nullptr, nullptr};
  std::uint32_t count = 0;
  std::uint32_t decays = 0;
  std::uint32_t tensor = 0;  // its tensor's place in the table
  std::size_t offset = 0;    // its first element's place in the tensor
};

constexpr std::size_t kChunkElements = 4096;

// visit(first, count) for each run of at most kChunkElements of a tensor's n elements.
template <class Visit>
void for_each_chunk(std::size_t n, const Visit& visit) {
  for (std::size_t first = 0; first < n; first += kChunkElements)
    visit(first, n - first < kChunkElements ? n - first : kChunkElements);
}

// A table of chunks made on the host, in device memory (where its kernels read it).
template <class Chunk>
Kokkos::View<Chunk*, MemSpace> device_table(const char* label, const std::vector<Chunk>& chunks) {
  Kokkos::View<Chunk*, MemSpace> table(std::string(label), chunks.size());
  const auto host = Kokkos::create_mirror_view(table);
  for (std::size_t i = 0; i < chunks.size(); ++i) host(i) = chunks[i];
  // On an instance: a two-argument deep_copy would wait for every instance (a global fence).
  const ExecSpace space;
  Kokkos::deep_copy(space, table, host);
  fence(space, label);
  return table;
}

template <class T>
class MultiTensorChunks {
 public:
  MultiTensorChunks() = default;
  explicit MultiTensorChunks(const std::vector<MultiTensorEntry<T>>& tensors) {
    std::vector<TensorChunk<T>> chunks;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const MultiTensorEntry<T>& e = tensors[t];
      const bool grad = e.grad.data() != nullptr;
      MESHSLICE_ASSERT(e.value.span_is_contiguous() && e.state.size() <= 2 &&
                           (!grad ||
                            (e.grad.span_is_contiguous() && elements(e.grad) == elements(e.value))),
                       "MultiTensorChunks: a tensor, gradient or state that is not contiguous, "
                       "of another size, or more than two state tensors");
      const std::size_t n = elements(e.value);
      first_chunk_.push_back(chunks.size());
      for_each_chunk(n, [&](std::size_t first, std::size_t count) {
        TensorChunk<T> c;
        c.value = e.value.data() + first;
        c.grad = grad ? e.grad.data() + first : nullptr;
        for (std::size_t s = 0; s < e.state.size(); ++s) {
          MESHSLICE_ASSERT(e.state[s].span_is_contiguous() && elements(e.state[s]) == n,
                           "MultiTensorChunks: a state tensor that is not contiguous or of "
                           "another size");
          c.state[s] = e.state[s].data() + first;
        }
        c.count = static_cast<std::uint32_t>(count);
        c.decays = e.decays ? 1 : 0;
        c.tensor = static_cast<std::uint32_t>(t);
        c.offset = first;
        chunks.push_back(c);
      });
    }
    first_chunk_.push_back(chunks.size());
    table_ = device_table("multi_tensor_chunks", chunks);
  }
  const Kokkos::View<TensorChunk<T>*, MemSpace>& table() const { return table_; }
  std::size_t size() const { return table_.extent(0); }
  std::size_t tensors() const { return first_chunk_.empty() ? 0 : first_chunk_.size() - 1; }
  // Tensor i's chunks are [first_chunk(i), first_chunk(i + 1)).
  std::size_t first_chunk(std::size_t tensor) const { return first_chunk_.at(tensor); }

 private:
  Kokkos::View<TensorChunk<T>*, MemSpace> table_;
  std::vector<std::size_t> first_chunk_;
};

// element(chunk, i) for every element i of every chunk: one launch.
template <class T, class Element>
void multi_tensor_for_each(const char* name, const ExecSpace& space,
                           const MultiTensorChunks<T>& chunks, const Element& element) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const Kokkos::View<TensorChunk<T>*, MemSpace> table = chunks.table();
  Kokkos::parallel_for(
      name, Policy(space, static_cast<int>(chunks.size()), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const TensorChunk<T> c = table(team.league_rank());
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c.count),
                             [&](std::uint32_t i) { element(c, i); });
      });
}

// chunk_sums(k) = the sum of term(chunk k, i) over its elements i, in double: one launch.
template <class T, class Term>
void multi_tensor_sum_each(const char* name, const ExecSpace& space,
                           const MultiTensorChunks<T>& chunks, const Term& term,
                           const Kokkos::View<double*, MemSpace>& chunk_sums) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const Kokkos::View<TensorChunk<T>*, MemSpace> table = chunks.table();
  Kokkos::parallel_for(
      name, Policy(space, static_cast<int>(chunks.size()), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const TensorChunk<T> c = table(team.league_rank());
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, c.count),
            [&](std::uint32_t i, double& acc) { acc += term(c, i); }, sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sums(team.league_rank()) = sum; });
      });
}

// Each tensor's sum of squares of its values, in double, in one launch and one copy: each chunk's
// sum (runs of its elements folded in lanes, core/fold_in_lanes.hpp, so a CPU vectorizes them)
// into `chunk_sums`, then each tensor's chunks added in order on the host. The order of the terms
// is fixed, so the sums are the same on every run.
template <class T>
std::vector<double> multi_tensor_sum_squares(
    const ExecSpace& space, const MultiTensorChunks<T>& chunks,
    const Kokkos::View<double*, MemSpace>& chunk_sums,
    const typename Kokkos::View<double*, MemSpace>::HostMirror& host_sums) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  constexpr std::uint32_t kRun = 256;
  const Kokkos::View<TensorChunk<T>*, MemSpace> table = chunks.table();
  Kokkos::parallel_for(
      "multi_tensor_sum_squares", Policy(space, static_cast<int>(chunks.size()), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const TensorChunk<T> c = table(team.league_rank());
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, (c.count + kRun - 1) / kRun),
            [&](std::uint32_t run, double& acc) {
              const std::uint32_t first = run * kRun;
              const std::uint32_t n = c.count - first < kRun ? c.count - first : kRun;
              acc += fold_in_lanes(n, 0.0, RowSquares<T, double>{c.value + first}, FoldSum());
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_sums(team.league_rank()) = sum; });
      });
  Kokkos::deep_copy(space, host_sums, chunk_sums);
  fence(space, "multi_tensor_sum_squares");
  std::vector<double> sums(chunks.tensors(), 0.0);
  for (std::size_t i = 0; i < sums.size(); ++i)
    for (std::size_t k = chunks.first_chunk(i); k < chunks.first_chunk(i + 1); ++k)
      sums[i] += host_sums(k);
  return sums;
}

}  // namespace meshslice
