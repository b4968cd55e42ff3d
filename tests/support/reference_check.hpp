#pragma once
// Checks shared by the tests of the training driver: a distributed run against the serial
// reference on the same global data, and two runs that must agree bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mesh/torus.hpp"
#include "model/block_layers.hpp"
#include "model/layer_plan.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"

namespace meshslice::testing {

// The model the MPI tests train: 2 blocks of H = 24 (6 heads) on sequences of 12 tokens, so that
// T, H, 3H and 4H split over every mesh extent used (up to 2 x 3 and 4 x 1) with room for S = 4
// and the heads over up to 3 columns.
inline ModelShape test_block_shape(std::size_t sequences) {
  ModelShape s;
  s.hidden = 24;
  s.heads = 6;
  s.blocks = 2;
  s.seq_len = 12;
  s.sequences = sequences;
  return s;
}

// How many of `params` keep only their replica's row of the fp32 master (a bf16 run's ZeRO-1).
template <class T>
std::size_t sharded_masters(const ParameterSet<T>& params) {
  std::size_t n = 0;
  for (const Parameter<T>& p : params) n += p.master_sharded();
  return n;
}

// `plan` with every FC layer transposed or W- or X-stationary (weights stored as W^T where the
// plan says), and a language model's head X-stationary (kept as W^T).
inline ModelPlan with_transposed_layers(ModelPlan plan) {
  plan[0].stationary = Stationary::W;
  plan[0].transposed = true;
  plan[1].stationary = Stationary::X;
  plan[2].stationary = Stationary::X;
  plan[2].transposed = true;
  plan.lm_head = plan[1];
  return plan;
}

// The tests' AdamW: lr 1e-2 after `warmup_steps`, decaying to 1e-3 at `total_steps`, weight
// decay 0.01, clipped to the global norm 0.5 (active in some steps: the norm is part of the
// checks).
inline OptimizerSettings test_adamw(std::size_t warmup_steps, std::size_t total_steps) {
  OptimizerSettings o;
  o.lr = 1e-2;
  o.min_lr = 1e-3;
  o.warmup_steps = warmup_steps;
  o.total_steps = total_steps;
  o.set("weight_decay", 0.01);
  o.clip_norm = 0.5;
  return o;
}

// max |got - want| over max |want|.
inline double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return diff / scale;
}

// `steps` training steps of `trainer` and `reference` (losses and gradient norms to 1e-9
// relative), then the evaluation loss over 2 batches and every final weight.
template <class Trainer>
void expect_matches_reference(Trainer& trainer, ReferenceTrainer<double>& reference,
                              const ModelShape& shape, int dp, int steps, const std::string& name) {
  const std::size_t global_tokens = shape.tokens() * static_cast<std::size_t>(dp);
  for (int step = 1; step <= steps; ++step) {
    const auto got = trainer.step();
    const double want = reference.train_step(global_tokens);
    ASSERT_NEAR(got.loss, want, 1e-9 * want) << name << " step " << step;
    ASSERT_NEAR(got.grad_norm, reference.last_gradient_norm(), 1e-9 * got.grad_norm)
        << name << " step " << step;
  }
  const double eval = trainer.eval_loss(2);
  EXPECT_NEAR(eval, reference.eval_loss(2, global_tokens), 1e-9 * eval) << name;
  for (std::size_t b = 0; b < shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds()) {
      const std::vector<double> got = trainer.student().gather(b, kind);
      EXPECT_LE(relative_error(got, reference.student().param(b, kind)), 1e-9)
          << name << " block " << b << " " << param_kind_name(kind);
    }
}

// `steps` steps of two trainers that must give the same losses and gradient norms bit for bit.
template <class Trainer>
void expect_identical_steps(Trainer& a, Trainer& b, int steps) {
  for (int step = 1; step <= steps; ++step) {
    const auto ra = a.step(), rb = b.step();
    EXPECT_EQ(ra.loss, rb.loss) << "step " << step;
    EXPECT_EQ(ra.grad_norm, rb.grad_norm) << "step " << step;
  }
}

}  // namespace meshslice::testing
