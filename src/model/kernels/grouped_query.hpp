#pragma once
// Grouped-query attention on a chip: the QKV projection gives [q | k | v] with `kv` key and value
// heads for `heads` query heads (the chip's whole groups, parameters/parameter_layout.hpp); the
// attention kernels (model/kernels/attention.hpp) read one key and value head per query head, so
// the keys and values are repeated across each group before them, as Hugging Face's Llama does
// (repeat_kv), and their gradients summed over the group after them. One launch each way.
//
//   narrow  tokens x (heads + 2 kv) dim: [q | k | v], query head h reading k and v head h / group
//   wide    tokens x 3 heads dim:        [q | k | v], k and v repeated per query head
#include <cstddef>

#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"
#include "model/kernels/elementwise.hpp"

namespace meshslice {

struct GroupedQuery {
  std::size_t heads = 0, kv = 0, dim = 0;  // on the chip
  KOKKOS_INLINE_FUNCTION std::size_t group() const { return heads / kv; }
  // The narrow column that wide column c reads (k and v: their group's head).
  KOKKOS_INLINE_FUNCTION std::size_t narrow_column(std::size_t c) const {
    const std::size_t q = heads * dim;
    if (c < q) return c;
    const std::size_t part = (c - q) / q, within = (c - q) % q;  // part 0: k, 1: v
    return q + part * kv * dim + (within / dim / group()) * dim + within % dim;
  }
};

// wide = narrow with k and v repeated per query head, its elements T or, in a bf16 run, bf16
// (rounded as they are repeated).
template <class T, class W>
void repeat_kv(const ExecSpace& space, const GroupedQuery& g, const Matrix<T>& narrow,
               const Matrix<W>& wide) {
  for_each_element(
      "repeat_kv", space, wide.extent(0), wide.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        wide(r, c) = element_cast<W>(narrow(r, g.narrow_column(c)));
      });
}

// d_narrow = d_wide with each k and v head's gradient summed over its group's query heads.
template <class T>
void sum_kv_over_groups(const ExecSpace& space, const GroupedQuery& g, const Matrix<T>& d_wide,
                        const Matrix<T>& d_narrow) {
  for_each_element(
      "sum_kv_over_groups", space, d_narrow.extent(0), d_narrow.extent(1),
      KOKKOS_LAMBDA(std::size_t r, std::size_t c) {
        const std::size_t q = g.heads * g.dim;
        if (c < q) {
          d_narrow(r, c) = d_wide(r, c);
          return;
        }
        // Part (k or v), head and dimension of narrow column c; the group's query heads' columns.
        const std::size_t part = (c - q) / (g.kv * g.dim), within = (c - q) % (g.kv * g.dim);
        const std::size_t first =
            q + part * q + (within / g.dim) * g.group() * g.dim + within % g.dim;
        T sum = 0;
        for (std::size_t j = 0; j < g.group(); ++j) sum += d_wide(r, first + j * g.dim);
        d_narrow(r, c) = sum;
      });
}

}  // namespace meshslice
