#pragma once
// One fully-connected layer Y = X W of the training driver, distributed over the mesh: the three
// GEMMs of its training step (forward, backward data, backward weight), each planned once with
// its own algorithm and slicing, in the dataflows of one row of Table 1 (gemm/fc_dataflow.hpp).
//
// Which operand each GEMM reads and writes, and so the layout every tensor keeps (chip (i, j)
// holds block (i, j) of the matrix as named here; the 2D algorithms only):
//   Y-stn:  forward  Y  = OS(X, W)     backward data  X'  = LS(Y', W)     weight W'  = RS(X, Y')
//   X-stn:  forward  Y  = LS(X, Wt)    backward data  X'  = OS(Y', Wt)    weight W't = RS(Y', X)
//   W-stn:  forward  Y  = RS(Xt, W)    backward data  X't = LS(W, Y')     weight W'  = OS(Xt, Y')
// where Wt = W^T is how an X-stationary layer keeps its weight, and Xt = X^T is how a
// W-stationary layer takes its input (and gives its input gradient). The weight gradient is
// accumulated over micro-batches through the GEMM's beta: no extra copies.
//
// The transposed variant computes the transpose of every one of those GEMMs, C^T = op'(B^T, A^T)
// (OS stays OS, LS and RS swap): every tensor is kept transposed (Y-stn then takes X^T and gives
// Y^T; W-stn takes X and gives Y^T), and the two operands of each GEMM swap places. The training
// driver uses it where it saves a re-layout of the layer's input.
//
//     FcLayer<RealExecutor<float>> layer(ex, Stationary::Y, false, tokens, in, out, {choice, choice, choice});
//     layer.forward(x, w, y);
//     const auto g = layer.output_gradient(dy);  // a bf16 run: rounded once for both
//     layer.backward_data(g, w, dx);
//     layer.backward_weight(x, g, dw, /*accumulate=*/micro_batch > 0);
#include <array>
#include <cstddef>
#include <memory>
#include <utility>

#include "gemm/fc_dataflow.hpp"
#include "gemm/gemm_plan.hpp"

namespace meshslice {

// How one GEMM of the layer runs: the algorithm and its slicing.
struct GemmChoice {
  Algorithm algorithm = Algorithm::meshslice;
  GemmOptions options{};
};

template <class Exec>
class FcLayer {
 public:
  using Mat = typename Exec::Mat;
  using Operand = typename GemmPlan<Exec>::Operand;  // a matrix, or a bf16 run's kept in bf16

  // Plans the three GEMMs for `tokens` rows of X, `in` inputs and `out` outputs (the forward
  // GEMM alone for a layer that is never trained: no backward workspaces). A choice the mesh
  // cannot run is a UserError on every rank, naming the pass.
  FcLayer(Exec& ex, Stationary stationary, bool transposed, std::size_t tokens, std::size_t in,
          std::size_t out, const std::array<GemmChoice, 3>& choices, bool trainable = true)
      : ex_(ex), stationary_(stationary), transposed_(transposed) {
    auto problems = fc_layer_gemms(stationary, tokens, in, out);
    if (transposed)
      for (auto& p : problems) p = meshslice::transposed(p);
    for (int pass = 0; pass < (trainable ? 3 : 1); ++pass) {
      const Algorithm a = choices[pass].algorithm;
      require(a != Algorithm::tp1d && a != Algorithm::fsdp, "FC layer ", pass_name(Pass(pass)),
              ": ", algorithm_name(a),
              " splits rows or columns over the whole tensor-parallel "
              "ring, but the layer keeps every tensor in 2D blocks; choose a 2D algorithm "
              "(meshslice, collective, summa, cannon, wang)");
      try {
        plans_[pass] = std::make_unique<GemmPlan<Exec>>(ex, choices[pass].algorithm, problems[pass],
                                                        choices[pass].options);
      } catch (const UserError& e) {
        throw UserError(concat("FC layer (", stationary_name(stationary),
                               transposed ? " transposed" : "", ", ", tokens, " tokens, ", in,
                               " -> ", out, "), ", pass_name(Pass(pass)), ": ", e.what()));
      }
    }
    if (trainable && rounds_output_gradient_once()) {
      const ShardRegion y = plan(Pass::forward).shard('C');  // dy is laid out like y
      ex_.reserve_shared_operand(y.rows, y.cols);
    }
  }

  Stationary stationary() const { return stationary_; }
  bool transposed() const { return transposed_; }
  const GemmPlan<Exec>& plan(Pass pass) const { return *plans_[static_cast<int>(pass)]; }
  // The three plans' workspaces.
  std::size_t workspace_bytes() const {
    std::size_t total = 0;
    for (const auto& plan : plans_)
      if (plan) total += plan->workspace_bytes();
    return total;
  }

  // Whether the GEMMs that read x (forward, and backward weight if planned) take it kept in bf16.
  bool input_takes_bf16() const {
    return plan(Pass::forward).takes_bf16_operands() &&
           (!plans_[static_cast<int>(Pass::backward_weight)] ||
            plan(Pass::backward_weight).takes_bf16_operands());
  }

  // Whether the GEMMs that read w (forward, and backward data if planned) take it kept in bf16.
  bool weight_takes_bf16() const {
    return plan(Pass::forward).takes_bf16_operands() &&
           (!plans_[static_cast<int>(Pass::backward_data)] ||
            plan(Pass::backward_data).takes_bf16_operands());
  }

  // Whether w keeps a bf16 copy for these GEMMs to read (Parameter::rounded): a bf16 run whose
  // plans for them take it kept in bf16.
  bool weight_kept_in_bf16() const { return ex_.keeps_operands_in_bf16() && weight_takes_bf16(); }

  // dy as both backward GEMMs read it: in a bf16 run rounded to bf16 once instead of by each,
  // where both plans take operands kept in bf16.
  Operand output_gradient(const Mat& dy) {
    if (rounds_output_gradient_once()) return ex_.shared_operand(dy);
    return dy;
  }

  // y = x w (x is X, or X^T when W-stationary; w is W, or W^T when X-stationary).
  void forward(const Operand& x, const Operand& w, const Mat& y) {
    run(Pass::forward, {&x, &w, nullptr}, y);
  }

  // dx = dy w^T: the input gradient, laid out like x.
  void backward_data(const Operand& dy, const Operand& w, const Mat& dx) {
    run(Pass::backward_data, {nullptr, &w, &dy}, dx);
  }

  // dw (+)= x^T dy: the weight gradient, laid out like w; accumulate adds to what dw holds
  // (micro-batches), otherwise overwrites it.
  void backward_weight(const Operand& x, const Operand& dy, const Mat& dw, bool accumulate) {
    run(Pass::backward_weight, {&x, nullptr, &dy}, dw, accumulate ? 1.0 : 0.0);
  }

  // Sizes now the executor's scratch in which a bf16 run rounds the operands that reach these
  // GEMMs in float (GemmPlan::reserve_rounding), so that no step allocates it: the input unless
  // `input_in_bf16` (its caller keeps it so), the weight unless it keeps a bf16 copy
  // (weight_kept_in_bf16), the output gradient unless output_gradient() rounds it once.
  void reserve_rounding(bool input_in_bf16) {
    const bool trained = plans_[static_cast<int>(Pass::backward_data)] != nullptr;
    const std::array<bool, 3> in_bf16 = {input_in_bf16, weight_kept_in_bf16(),
                                         trained && rounds_output_gradient_once()};
    for (int pass = 0; pass < 3; ++pass) {
      if (!plans_[pass]) continue;
      const auto [a, b] = operands(Pass(pass));
      plans_[pass]->reserve_rounding(in_bf16[static_cast<int>(a)], in_bf16[static_cast<int>(b)]);
    }
  }

 private:
  // The tensors a GEMM multiplies, by role (the places of operands() and run()'s array).
  enum class Role { input, weight, output_gradient };
  // Which tensors pass `pass` multiplies as its plan's A and B (Table 1's row, at the top):
  //   forward          Y = OS(X, W), LS(X, Wt) or RS(Xt, W)
  //   backward data    X' = LS(Y', W) or OS(Y', Wt); W-stationary X't = LS(W, Y')
  //   backward weight  W' = RS(X, Y') or OS(Xt, Y'); X-stationary W't = RS(Y', X)
  // swapped when transposed: C^T = op'(B^T, A^T), the operands as kept.
  std::pair<Role, Role> operands(Pass pass) const {
    using R = Role;
    std::pair<R, R> ab{R::input, R::weight};
    if (pass == Pass::backward_data)
      ab = stationary_ == Stationary::W ? std::pair{R::weight, R::output_gradient}
                                        : std::pair{R::output_gradient, R::weight};
    if (pass == Pass::backward_weight)
      ab = stationary_ == Stationary::X ? std::pair{R::output_gradient, R::input}
                                        : std::pair{R::input, R::output_gradient};
    if (transposed_) std::swap(ab.first, ab.second);
    return ab;
  }
  bool rounds_output_gradient_once() const {
    return plan(Pass::backward_weight).takes_bf16_operands() &&
           plan(Pass::backward_data).takes_bf16_operands();
  }
  // c = a b (+ beta c) by `pass`'s plan, its operands taken from `tensors` by role.
  void run(Pass pass, const std::array<const Operand*, 3>& tensors, const Mat& c,
           double beta = 0.0) {
    MESHSLICE_ASSERT(plans_[static_cast<int>(pass)] != nullptr, "FcLayer: ", pass_name(pass),
                     " of a layer planned without its backward passes");
    const auto [a, b] = operands(pass);
    plans_[static_cast<int>(pass)]->run(*tensors[static_cast<int>(a)],
                                        *tensors[static_cast<int>(b)], c, 1.0, beta);
  }

  Exec& ex_;
  Stationary stationary_;
  bool transposed_;
  std::array<std::unique_ptr<GemmPlan<Exec>>, 3> plans_;
};

}  // namespace meshslice
