#pragma once
// The dataflows of a fully-connected layer Y = X W (MeshSlice paper §3.2.1, Table 1): which of
// X (T x I), W (I x O) and Y (T x O) stays stationary, and the forward, backward-data and
// backward-weight GEMMs that follow from the same row of the table:
//   Y-stn:  Y = OS(X, W)            X' = LS(Y', W)          W'   = RS(X, Y')
//   X-stn:  Y = LS(X, W^T)          X' = OS(Y', W^T)        W'^T = RS(Y', X)
//   W-stn:  Y = RS(X^T, W)          X'^T = LS(W, Y')        W'   = OS(X^T, Y')
// so the largest matrix stays in place in all three, each matrix and its gradient flow the same
// way, and nothing is transposed during training (X-stn keeps W as W^T; W-stn takes its input as
// X^T and gives its input gradient as X'^T). Shared by the emulator's layer tables and the
// training driver's layers.
#include <array>
#include <cstddef>
#include <vector>

#include "gemm/gemm_problem.hpp"

namespace meshslice {

enum class Stationary { Y, X, W };
const char* stationary_name(Stationary s);  // "Y-stn", "X-stn", "W-stn"

// The stationary matrix of Y = X W for T tokens: the largest of X, W and Y (the paper's rule).
Stationary choose_stationary(std::size_t tokens, std::size_t in, std::size_t out);

// The same for a layer whose input and output stay in the standard layout, so W-stn (which takes
// its input transposed) is out: the larger of X (T x I) and Y (T x O). A language model's head,
// named kLmHeadName ("lm_head") in plans and tables.
Stationary choose_standard_stationary(std::size_t in, std::size_t out);
inline constexpr const char* kLmHeadName = "lm_head";

// Phase 1 of the autotuner along a chain of FC layers: each layer's row of Table 1 (the largest
// matrix stationary) and whether it runs its transposed variant. Untransposed, a W-stationary
// layer takes its input transposed and every layer gives its output standard; the transposed
// variant flips both. A layer that reads its predecessor's output directly takes it in the layout
// the predecessor gives, so no activation is transposed between them; any other layer takes
// the standard layout (the paper's heuristic, and its reference implementation's).
struct FcShape {
  std::size_t in = 0;
  std::size_t out = 0;
  bool reads_previous = false;  // its input is the previous layer's output, layout kept
};
struct FcDataflow {
  Stationary stationary = Stationary::Y;
  bool transposed = false;
};
std::vector<FcDataflow> choose_dataflows(std::size_t tokens, const std::vector<FcShape>& chain);

enum class Pass { forward = 0, backward_data = 1, backward_weight = 2 };
const char* pass_name(Pass pass);  // "fwd", "bwd_data", "bwd_weight"

// The three GEMMs of the row of Table 1, untransposed, for T tokens and the layer's I and O,
// indexed by Pass.
std::array<GemmProblem, 3> fc_layer_gemms(Stationary s, std::size_t tokens, std::size_t in,
                                          std::size_t out);

// The transposed variant of a GEMM, C^T = (A B)^T: OS stays OS, LS and RS swap, and so do M and N.
GemmProblem transposed(const GemmProblem& p);

}  // namespace meshslice
