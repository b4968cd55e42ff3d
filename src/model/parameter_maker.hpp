#pragma once
// The model's trainable tensors made as its parts declare them (parameters/parameter_set.hpp): each
// shard allocated and drawn from its seed stream; on a trainable model also its gradient, its
// ZeRO-1 row of the averaged gradient (the optimizer state sharded over dp where the shard's
// elements divide over it) and its optimizer state; the bytes counted into the model's memory.
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

namespace meshslice {

// A weight as its layer's GEMMs read it: its bf16 copy where it keeps one (ParameterMaker::add's
// bf16_copy), else its value.
template <class T>
GemmOperand<T> weight_operand(const Parameter<T>& w) {
  GemmOperand<T> operand(w.value);
  operand.rounded = w.rounded;
  return operand;
}

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
  // (seed, stream, std_dev), and with `bf16_copy` its copy in bf16 (Parameter::rounded, counted
  // with the parameters; filled by parameters/rounded_copies.hpp); returns its place in the set.
  std::size_t add(Parameter<T> p, std::size_t rows, std::size_t cols, std::uint64_t seed,
                  std::uint64_t stream, double std_dev, bool bf16_copy = false) {
    p.value = counted_matrix<Exec>(p.name, rows, cols, memory_.parameters);
    if (bf16_copy) memory_.parameters += rows * cols * sizeof(bfloat16);  // without data too
    if constexpr (Exec::holds_data) {
      fill_parameter(ex_.compute_space(), p.value, p.layout, seed, stream, std_dev);
      if (bf16_copy) p.rounded = Matrix<bfloat16>(p.name + "_bf16", rows, cols);
    }
    if (trainable_) {
      p.grad = counted_matrix<Exec>("gradient", rows, cols, memory_.gradients);
      const std::size_t n = rows * cols, dp = static_cast<std::size_t>(ex_.size(Axis::dp));
      if (zero_ && dp > 1 && n % dp == 0) {  // ZeRO-1: this replica's row of dp
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
    set_.add(std::move(p));
    return set_.size() - 1;
  }

 private:
  Exec& ex_;
  ParameterSet<T>& set_;
  Optimizer<T>& optimizer_;
  bool trainable_, zero_;
  MemoryUse& memory_;
};

}  // namespace meshslice
