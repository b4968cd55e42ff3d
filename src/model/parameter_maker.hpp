#pragma once
// The model's trainable tensors made as its parts declare them (parameters/parameter_set.hpp): each
// shard allocated and drawn from its seed stream; on a trainable model also its gradient, its
// ZeRO-1 row of the averaged gradient (the optimizer state sharded over dp where the shard's
// elements divide over it, and a bf16 run's master weight where only its copy is read) and its
// optimizer state; the bytes counted into the model's memory.
//
//     ParameterMaker<Exec> make(ex, set, optimizer, trainable, zero, memory);
//     std::size_t i = make.add(std::move(p), rows, cols, seed, stream, std_dev);  // set[i]
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "exec/gemm_operand.hpp"
#include "model/kernels/elementwise.hpp"
#include "model/memory_use.hpp"
#include "model/model_buffer.hpp"
#include "parameters/optimizer.hpp"
#include "parameters/parameter_set.hpp"
#include "parameters/rounded_copies.hpp"

namespace meshslice {

// A weight as its layer's GEMMs read it: its bf16 copy where it keeps one (ParameterMaker::add's
// Bf16Copy), else its value.
template <class T>
GemmOperand<T> weight_operand(const Parameter<T>& w) {
  GemmOperand<T> operand(w.value);
  operand.rounded = w.rounded;
  return operand;
}

// Whether a weight keeps a bf16 copy (Parameter::rounded) for its layers' GEMMs, and whether
// anything reads its fp32 value too (the tied head's table: the embedding's lookup). A weight
// read only through its copy keeps, with ZeRO-1, only its replica's row of the master.
enum class Bf16Copy { none, beside_read_value, only_copy_read };

template <class Exec>
class ParameterMaker {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;

  ParameterMaker(Exec& ex, ParameterSet<T>& set, Optimizer<T>& optimizer, bool trainable, bool zero,
                 MemoryUse& memory)
      : ex_(ex),
        set_(set),
        optimizer_(optimizer),
        trainable_(trainable),
        zero_(trainable && zero),
        memory_(memory) {}

  const ParameterSet<T>& set() const { return set_; }

  // `p` (its name, order, shape and layout set) with a rows x cols shard initialised from
  // (seed, stream, std_dev), and its bf16 copy as `copy` says (counted with the parameters;
  // filled by parameters/rounded_copies.hpp); returns its place in the set.
  std::size_t add(Parameter<T> p, std::size_t rows, std::size_t cols, std::uint64_t seed,
                  std::uint64_t stream, double std_dev, Bf16Copy copy = Bf16Copy::none) {
    const std::size_t n = rows * cols, dp = static_cast<std::size_t>(ex_.size(Axis::dp));
    const bool zero_rows = zero_ && dp > 1 && n % dp == 0;  // ZeRO-1: this replica's row of dp
    // Its rounded row travels as whole T's (GradientSync moves matrices of T).
    const bool master_row = zero_rows && copy == Bf16Copy::only_copy_read &&
                            (n / dp * sizeof(bfloat16)) % sizeof(T) == 0;
    if (master_row) {
      p.value = Mat(static_cast<T*>(nullptr), rows, cols);  // the shape: no whole master here
      p.master_row = counted_matrix<Exec>(p.name + "_master", 1, n / dp, memory_.parameters);
    } else {
      p.value = counted_matrix<Exec>(p.name, rows, cols, memory_.parameters);
    }
    if (copy != Bf16Copy::none) memory_.parameters += n * sizeof(bfloat16);  // without data too
    if constexpr (Exec::holds_data)
      if (copy != Bf16Copy::none) p.rounded = Matrix<bfloat16>(p.name + "_bf16", rows, cols);
    if (trainable_) {
      p.grad = counted_matrix<Exec>("gradient", rows, cols, memory_.gradients);
      if (zero_rows) {
        p.grad_row = counted_matrix<Exec>("gradient_shard", 1, n / dp, memory_.gradients);
        p.dp_rows = dp;
        p.dp_row = static_cast<std::size_t>(ex_.coord(Axis::dp));
      }
      const Mat updated = p.updated();
      std::vector<Mat> state;
      for (const OptimizerState& s :
           optimizer_states(optimizer_.kind(), p.global.rows, p.global.cols)) {
        const std::size_t r = s.like_parameter ? updated.extent(0) : s.rows;
        const std::size_t c = s.like_parameter ? updated.extent(1) : s.cols;
        state.push_back(counted_matrix<Exec>("optimizer_state", r, c, memory_.optimizer_state));
      }
      optimizer_.add(std::move(state));
    }
    if constexpr (Exec::holds_data) initialise(p, seed, stream, std_dev);
    set_.add(std::move(p));
    return set_.size() - 1;
  }

 private:
  // p's values drawn; a sharded master's whole shard is drawn into its gradient's memory (not
  // yet written), its row kept and the whole rounded into its copy, the same on every replica.
  void initialise(const Parameter<T>& p, std::uint64_t seed, std::uint64_t stream, double std_dev) {
    const ExecSpace space = ex_.compute_space();
    if (!p.master_sharded()) return fill_parameter(space, p.value, p.layout, seed, stream, std_dev);
    fill_parameter(space, p.grad, p.layout, seed, stream, std_dev);
    Kokkos::deep_copy(space, p.master_row, row_of(p.grad, p.dp_rows, p.dp_row));
    RoundedCopies<T>({{p.grad.data(), p.rounded.data(), elements(p.grad)}}).refresh(space);
    Kokkos::deep_copy(space, p.grad, T(0));
    fence(space, "parameter_init");  // before the rounding table goes
  }

  Exec& ex_;
  ParameterSet<T>& set_;
  Optimizer<T>& optimizer_;
  bool trainable_, zero_;
  MemoryUse& memory_;
};

}  // namespace meshslice
