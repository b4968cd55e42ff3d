// The optimizer table: names, state tensors and deck keys as the deck, the checkpoint and the
// tuner read them.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "model/optimizers/optimizer_table.hpp"

namespace meshslice {
namespace {

TEST(OptimizerTable, NamesTheOptimizersAdamwFirst) {
  EXPECT_EQ(optimizer_names(), (std::vector<std::string>{"adamw", "sgd", "lion"}));
  EXPECT_STREQ(optimizer_name(OptimizerKind{}), "adamw");
  for (const std::string& name : optimizer_names())
    EXPECT_EQ(optimizer_name(parse_optimizer(name)), name);
}

TEST(OptimizerTable, StateTensorsAreTheCheckpointsSuffixes) {
  EXPECT_EQ(optimizer_state_names(parse_optimizer("adamw")),
            (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  EXPECT_EQ(optimizer_state_names(parse_optimizer("sgd")), std::vector<std::string>{"momentum"});
  EXPECT_EQ(optimizer_state_names(parse_optimizer("lion")), std::vector<std::string>{"exp_avg"});
}

TEST(OptimizerTable, AnUnknownNameListsTheValidOnes) {
  try {
    parse_optimizer("adam");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown optimizer 'adam'; valid optimizers: adamw, sgd, lion");
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
  EXPECT_EQ(keys,
            (std::vector<std::string>{"beta1", "beta2", "epsilon", "weight_decay", "momentum"}));
  EXPECT_EQ(beta1_doc,
            "adamw: the first moment's decay; lion: the momentum's share of the update's "
            "direction");
  EXPECT_EQ(decay_doc,
            "adamw, lion: decoupled weight decay of the weight matrices (not the norms' gains)");
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
