#pragma once
// The step's scalars every optimizer takes: the learning rate of step t and the factor that clips
// the gradients to a global norm. The serial reference and the distributed update read the same.
#include <cmath>
#include <cstddef>

#include "parameters/optimizers/optimizer_settings.hpp"

namespace meshslice {

// Learning rate of step t (1-based): linear warm-up from lr/warmup to lr over warmup_steps, then
// cosine decay to min_lr at total_steps (and min_lr after).
inline double learning_rate(const OptimizerSettings& o, std::size_t t) {
  if (o.warmup_steps > 0 && t <= o.warmup_steps)
    return o.lr * static_cast<double>(t) / static_cast<double>(o.warmup_steps);
  if (t >= o.total_steps || o.total_steps <= o.warmup_steps) return o.min_lr;
  const double progress =
      static_cast<double>(t - o.warmup_steps) / static_cast<double>(o.total_steps - o.warmup_steps);
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(3.141592653589793 * progress));
}

// The factor gradients are multiplied by before the update: clip to the global norm.
inline double clip_factor(const OptimizerSettings& o, double global_norm) {
  if (o.clip_norm <= 0 || global_norm <= o.clip_norm) return 1.0;
  return o.clip_norm / (global_norm + 1e-6);
}

}  // namespace meshslice
