#pragma once
// The model's tensors on an executor: allocated where the executor holds data, or only their
// shape on a data-free one (exec/null_executor.hpp), whose emulated step needs the extents alone.
#include <cstddef>
#include <string>

#include "core/kokkos_types.hpp"

namespace meshslice {

template <class Exec>
Matrix<typename Exec::Scalar> model_matrix(const std::string& label, std::size_t rows,
                                           std::size_t cols) {
  using T = typename Exec::Scalar;
  if constexpr (Exec::holds_data) return Matrix<T>(label, rows, cols);
  return Matrix<T>(static_cast<T*>(nullptr), rows, cols);
}

// model_matrix, its bytes added to `use` (one of a model's memory accounts).
template <class Exec>
Matrix<typename Exec::Scalar> counted_matrix(const std::string& label, std::size_t rows,
                                             std::size_t cols, std::size_t& use) {
  use += rows * cols * sizeof(typename Exec::Scalar);
  return model_matrix<Exec>(label, rows, cols);
}

template <class Exec>
Buffer<typename Exec::Scalar> model_vector(const std::string& label, std::size_t n) {
  using T = typename Exec::Scalar;
  if constexpr (Exec::holds_data) return Buffer<T>(label, n);
  return Buffer<T>(static_cast<T*>(nullptr), n);
}

}  // namespace meshslice
