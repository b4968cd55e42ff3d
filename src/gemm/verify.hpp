#pragma once
// Checks a distributed GEMM result against a serial GEMM of the same global operands.
#include "core/kokkos_types.hpp"
#include "gemm/algorithm.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

constexpr std::uint64_t kSaltA = 11;
constexpr std::uint64_t kSaltB = 23;

// Fills this chip's shards of A and B from the global operands (operand_data.hpp).
template <class T>
void fill_gemm_operands(Algorithm algorithm, const GemmProblem& p, const Torus& torus,
                        const Matrix<T>& a, const Matrix<T>& b);

// max |C - C_ref| / max |C_ref| over all chips of the tensor-parallel group (collective over
// it): every chip recomputes its own region of C in double from the global operands with one
// local GEMM.
template <class T>
double max_relative_error(Algorithm algorithm, const GemmProblem& p, const Torus& torus,
                          const Matrix<T>& c);

}  // namespace meshslice
