#pragma once
// What a caller's own work costs, described for the executors that run it (RealExecutor's
// compute() and communicate() hooks): the real executor records it in its trace, the emulating
// side of sim::CombinedExecutor times it on the emulated chip. The training step's norms,
// attention, activations, loss and optimizer are LocalWork; its re-layouts and small sums are
// CommWork.
//
// Element counts, not bytes: the emulated machine has its own element size (bf16 on TPUv4).
#include <cstddef>
#include <vector>

namespace meshslice {

// `count` independent products C (m x n) = A (m x k) B (k x n), C += A B when `accumulate`
// (a batch of small GEMMs, such as attention's per-head q k^T).
struct LocalGemm {
  std::size_t count = 1, m = 0, n = 0, k = 0;
  bool accumulate = false;
  double flops() const { return 2.0 * static_cast<double>(count) * m * n * k; }
};

struct LocalWork {
  std::vector<LocalGemm> gemms;  // on the matrix units
  double elements = 0;           // read plus written by the element-wise parts, through memory

  // Element-wise work streaming `elements` reads and writes.
  static LocalWork streaming(double elements) { return LocalWork{{}, elements}; }
  double flops() const {
    double total = 0;
    for (const LocalGemm& g : gemms) total += g.flops();
    return total;
  }
};

// A blocking collective the caller runs itself over a ring.
struct CommWork {
  enum Pattern {
    all_reduce,  // every chip sums `elements` (the buffer each chip holds) over the ring
    all_to_all,  // every chip sends `elements` in all, an equal piece to each other chip
  };
  Pattern pattern = all_reduce;
  double elements = 0;
};

}  // namespace meshslice
