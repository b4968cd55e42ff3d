// The optimizer table: names, state tensors and deck keys as the deck, the checkpoint and the
// tuner read them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "parameters/optimizers/optimizer_table.hpp"

namespace meshslice {
namespace {

TEST(OptimizerTable, NamesTheOptimizersAdamwFirst) {
  EXPECT_EQ(optimizer_names(),
            (std::vector<std::string>{"adamw", "sgd", "lion", "adafactor", "nadamw"}));
  EXPECT_STREQ(optimizer_name(OptimizerKind{}), "adamw");
  for (const std::string& name : optimizer_names())
    EXPECT_EQ(optimizer_name(parse_optimizer(name)), name);
}

TEST(OptimizerTable, StateTensorsAreTheCheckpointsSuffixes) {
  EXPECT_EQ(optimizer_state_names(parse_optimizer("adamw")),
            (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  EXPECT_EQ(optimizer_state_names(parse_optimizer("sgd")), std::vector<std::string>{"momentum"});
  EXPECT_EQ(optimizer_state_names(parse_optimizer("lion")), std::vector<std::string>{"exp_avg"});
  EXPECT_EQ(optimizer_state_names(parse_optimizer("nadamw")),
            (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
}

// Adafactor factors a matrix (a value per row, one per column) and keeps a vector's moment whole.
TEST(OptimizerTable, AdafactorFactorsMatricesNotVectors) {
  const OptimizerKind adafactor = parse_optimizer("adafactor");
  const std::vector<OptimizerState> matrix = optimizer_states(adafactor, 6, 4);
  ASSERT_EQ(matrix.size(), 2u);
  EXPECT_EQ(matrix[0].suffix, "row_var");
  EXPECT_EQ(matrix[0].rows * 10 + matrix[0].cols, 61u);
  EXPECT_EQ(matrix[1].suffix, "col_var");
  EXPECT_EQ(matrix[1].rows * 10 + matrix[1].cols, 14u);
  EXPECT_FALSE(matrix[0].like_parameter || matrix[1].like_parameter);
  const std::vector<OptimizerState> gain = optimizer_states(adafactor, 1, 4);
  ASSERT_EQ(gain.size(), 1u);
  EXPECT_EQ(gain[0].suffix, "variance");
  EXPECT_TRUE(gain[0].like_parameter);
  EXPECT_EQ(optimizer_states_per_weight(adafactor), 0.0);
  EXPECT_EQ(optimizer_states_per_weight(parse_optimizer("adamw")), 2.0);
  EXPECT_EQ(optimizer_states(parse_optimizer("adamw"), 6, 4).size(), 2u);
}

TEST(OptimizerTable, AnUnknownNameListsTheValidOnes) {
  try {
    parse_optimizer("adam");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown optimizer 'adam'; valid optimizers: adamw, sgd, lion, adafactor, nadamw");
  }
}

TEST(OptimizerTable, EachKeyOnceItsDocNamingEveryOptimizerThatReadsIt) {
  std::vector<std::string> keys;
  std::string beta1_doc, decay_doc;
  for (const OptimizerKey& k : optimizer_deck_keys()) {
    keys.emplace_back(k.key);
    if (keys.back() == "beta1") beta1_doc = k.doc;
    if (keys.back() == "weight_decay") decay_doc = k.doc;
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"beta1", "beta2", "epsilon", "weight_decay", "momentum",
                                            "beta2_decay", "epsilon1", "epsilon2", "clip_threshold",
                                            "momentum_decay"}));
  EXPECT_EQ(beta1_doc,
            "adamw, nadamw: the first moment's decay; lion: the momentum's share of the update's "
            "direction");
  EXPECT_EQ(decay_doc,
            "adamw, lion, adafactor, nadamw: decoupled weight decay of the weight matrices (not "
            "the norms' gains)");
}

// NAdamW's step sizes with the momentum schedule's product cut short once it is below 2^-54 are
// those of the whole product, at any step and for beta1 0.9 and 0.99. To 1e-13 relative, not in
// bits: a compiler for an FMA machine fuses multiply-adds (in mu's 1 - 0.5 x) where it sees fit,
// and 1 - mu, about 0.01 for beta1 0.99, makes mu's last bit its 1e-14 (a cut at 2^-40 would be
// 1e-12 off).
TEST(OptimizerTable, NadamwsScheduleProductStopsWhereItNoLongerMatters) {
  for (const double beta1 : {0.9, 0.99}) {
    OptimizerSettings o;
    o.kind = parse_optimizer("nadamw");
    o.set("beta1", beta1);
    const double psi = o.value("momentum_decay");
    const auto mu = [&](std::size_t t) {
      return beta1 * (1.0 - 0.5 * std::pow(0.96, static_cast<double>(t) * psi));
    };
    double product = 1;
    for (std::size_t t = 1; t <= 20000; ++t) {
      product *= mu(t);
      if (t > 60 && t % 997 != 0) continue;  // around the cut (step 48 or 54) and beyond
      const Nadamw::Scalars u = Nadamw::scalars(o, {0.01, t, 1.0, true});
      const double gradient_step = 0.01 * (1.0 - mu(t)) / (1.0 - product);
      const double momentum_step = 0.01 * mu(t + 1) / (1.0 - product * mu(t + 1));
      EXPECT_NEAR(u.gradient_step, gradient_step, 1e-13 * gradient_step) << beta1 << " " << t;
      EXPECT_NEAR(u.momentum_step, momentum_step, 1e-13 * momentum_step) << beta1 << " " << t;
    }
  }
}

TEST(OptimizerSettings, AKeyNotSetReadsAsItsDefault) {
  OptimizerSettings o;
  EXPECT_EQ(o.value("beta2"), 0.95);
  EXPECT_EQ(o.value("momentum"), 0.9);
  o.set("beta2", 0.99);
  EXPECT_EQ(o.value("beta2"), 0.99);
  EXPECT_THROW(o.set("betta2", 0.99), InternalError);
  EXPECT_THROW(o.value("betta2"), InternalError);
}

}  // namespace
}  // namespace meshslice
