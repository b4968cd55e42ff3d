#pragma once
// What decides a run's numbers besides its shape and settings: the seeds of the trained model's
// initial weights, of the synthetic task's teacher and of its inputs, and which stream of inputs
// a step or an evaluation batch reads. The model, its serial reference and a checkpoint (which
// records them, so that a resumed run trains on the same task) read them here.
#include <cstddef>
#include <cstdint>

namespace meshslice {

struct TaskSeeds {
  std::uint64_t student = 1;  // the trained model's initial weights
  std::uint64_t teacher = 2;  // the fixed model whose outputs are the targets
  std::uint64_t data = 3;     // inputs
};

// The stream of the inputs of training step `step` (0-based) and of evaluation batch `batch`.
// Input element (global token g, hidden h) of a step is counter_normal(data seed, stream, g, h);
// replica r of dp takes global tokens [r T, (r + 1) T).
constexpr std::uint64_t train_input_stream(std::size_t step) { return step; }
constexpr std::uint64_t eval_input_stream(std::size_t batch) {
  return (std::uint64_t{1} << 40) + batch;  // held out: never a training step's stream
}

}  // namespace meshslice
