#include "gemm/fc_dataflow.hpp"

namespace meshslice {

const char* stationary_name(Stationary s) {
  switch (s) {
    case Stationary::Y: return "Y-stn";
    case Stationary::X: return "X-stn";
    case Stationary::W: return "W-stn";
  }
  return "?";
}

Stationary choose_stationary(std::size_t tokens, std::size_t in, std::size_t out) {
  // Comparing T x I, I x O and T x O is comparing T, O and I pairwise.
  if (out >= in && tokens >= in) return Stationary::Y;  // Y is the largest
  if (in >= out && tokens >= out) return Stationary::X;
  return Stationary::W;
}

Stationary choose_standard_stationary(std::size_t in, std::size_t out) {
  return in > out ? Stationary::X : Stationary::Y;
}

std::vector<FcDataflow> choose_dataflows(std::size_t tokens, const std::vector<FcShape>& chain) {
  std::vector<FcDataflow> out;
  bool previous_output_transposed = false;
  for (const FcShape& layer : chain) {
    FcDataflow d;
    d.stationary = choose_stationary(tokens, layer.in, layer.out);
    const bool input_transposed = layer.reads_previous && previous_output_transposed;
    // Untransposed, only W-stn takes a transposed input; the transposed variant flips that.
    d.transposed = (d.stationary == Stationary::W) != input_transposed;
    previous_output_transposed = d.transposed;
    out.push_back(d);
  }
  return out;
}

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::forward: return "fwd";
    case Pass::backward_data: return "bwd_data";
    case Pass::backward_weight: return "bwd_weight";
  }
  return "?";
}

std::array<GemmProblem, 3> fc_layer_gemms(Stationary s, std::size_t T, std::size_t I,
                                          std::size_t O) {
  switch (s) {
    case Stationary::Y:
      return {GemmProblem{Dataflow::OS, T, O, I},   // Y = X W
              GemmProblem{Dataflow::LS, T, I, O},   // X' = Y' W^T
              GemmProblem{Dataflow::RS, I, O, T}};  // W' = X^T Y'
    case Stationary::X:
      return {GemmProblem{Dataflow::LS, T, O, I},   // Y = X (W^T)^T
              GemmProblem{Dataflow::OS, T, I, O},   // X' = Y' W^T
              GemmProblem{Dataflow::RS, O, I, T}};  // W'^T = Y'^T X
    case Stationary::W: break;
  }
  return {GemmProblem{Dataflow::RS, T, O, I},   // Y = (X^T)^T W
          GemmProblem{Dataflow::LS, I, T, O},   // X'^T = W Y'^T
          GemmProblem{Dataflow::OS, I, O, T}};  // W' = X^T Y'
}

GemmProblem transposed(const GemmProblem& p) {
  const Dataflow flow = p.flow == Dataflow::OS   ? Dataflow::OS
                        : p.flow == Dataflow::LS ? Dataflow::RS
                                                 : Dataflow::LS;
  return {flow, p.N, p.M, p.K};
}

}  // namespace meshslice
