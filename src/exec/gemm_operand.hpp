#pragma once
// A GEMM operand of RealExecutor: a matrix of its scalar, or, in a bf16 run, one kept in bf16:
// a gathered slice that travelled in bf16 (comm/partial_collectives.hpp's
// ipartial_all_gather_rounded) and is multiplied as it arrived, or an operand that several GEMMs
// read, rounded once (RealExecutor::shared_operand: an FC layer's output gradient; a weight's
// bf16 copy, parameters/rounded_copies.hpp; a saved activation kept in bf16). Every matrix
// is an operand (the conversion is implicit), so the GEMM algorithms pass either to ex.gemm and
// GemmPlan::run; MeshSlice slices and gathers a kept operand as it is. Only gathers travel in
// bf16. The LS and RS reduce-scatters sum partial products, which stay float: MPI has no bf16
// sum, and rounding the running sum at every ring step would lose bits that the serial reference
// (and PyTorch's autocast) keep.
//
//     GemmOperand<float> g = ex.alloc_gathered(rows, cols, "label");  // bf16 run: g.rounded
//     ex.wait(ex.start_partial_all_gather(axis, local, g, dim, spec));
//     ex.gemm(1.0, g, false, b, false, 0.0, c);                       // no rounding left to do
#include <cstddef>

#include "core/bfloat16.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {

template <class T>
struct GemmOperand {
  GemmOperand() = default;
  GemmOperand(const Matrix<T>& m) : value(m) {}  // NOLINT: implicit, every matrix is one

  Matrix<T> value;           // the operand; in bf16: the memory `rounded` lives in, if its own
  Matrix<bfloat16> rounded;  // the operand in bf16, if it is

  // Whether `rounded` is set (in a data-free model, sim::NullExecutor's: a shape, no memory).
  bool in_bf16() const { return rounded.data() != nullptr || rounded.extent(0) > 0; }
  std::size_t extent(int dim) const { return in_bf16() ? rounded.extent(dim) : value.extent(dim); }
};

}  // namespace meshslice
