#pragma once
// The three dataflows of a 2D GEMM (MeshSlice paper, Fig. 1), named after the operand that stays
// in place ("stationary"):
//   OS (output-stationary): C(MxN) = A(MxK) · B(KxN)
//   LS (left-stationary):   C(MxN) = A(MxK) · B(NxK)ᵀ
//   RS (right-stationary):  C(MxN) = A(KxM)ᵀ · B(KxN)
// (gemm_problem.hpp turns a dataflow and M, N, K into operand and shard shapes.)
#include <string>

namespace meshslice {

enum class Dataflow { OS, LS, RS };

const char* dataflow_name(Dataflow flow);  // "OS", "LS", "RS", as the paper writes them
// "os", "ls" or "rs" in any case (so dataflow_name round-trips); anything else is a UserError
// that lists the valid names.
Dataflow parse_dataflow(const std::string& name);

}  // namespace meshslice
