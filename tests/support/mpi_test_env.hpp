#pragma once
// Shared helpers of the MPI tests: the torus under test and deterministic global data.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/kokkos_types.hpp"
#include "mesh/torus.hpp"

namespace meshslice::testing {

const Torus& torus();

// A small integer (|v| <= 48) that depends on every argument: sums of a few of them are exact
// in float, so reference and result can be compared exactly, yet different ranks, rows and
// columns never coincide by accident.
inline double global_value(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  std::uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
  h ^= (c + 0x85EBCA77C2B2AE63ull) * 0x94D049BB133111EBull;
  h ^= (d + 0x27D4EB2F165667C5ull) * 0xD6E8FEB86659FD93ull;
  h ^= h >> 31;
  return static_cast<double>(h % 97) - 48.0;
}

// Device matrix filled on the host by f(i, j).
template <class T, class F>
Matrix<T> make_matrix(std::size_t rows, std::size_t cols, F f) {
  Matrix<T> m("test_matrix", rows, cols);
  auto host = Kokkos::create_mirror_view(m);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) host(i, j) = static_cast<T>(f(i, j));
  Kokkos::deep_copy(m, host);
  return m;
}

template <class T>
auto to_host(const Matrix<T>& m) {
  auto host = Kokkos::create_mirror_view(m);
  Kokkos::deep_copy(host, m);
  return host;
}

}  // namespace meshslice::testing
