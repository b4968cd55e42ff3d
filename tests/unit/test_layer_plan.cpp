// The FC layers' plan (model/layer_plan.hpp): phase 1's default, and the plan entries decks and
// meshslice-tune's plan files write, per pass.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/errors.hpp"
#include "model/layer_plan.hpp"
#include "sim/fc_layers.hpp"

namespace meshslice {
namespace {

TEST(LayerPlan, EntriesGiveSlicesAndBlocksPerPass) {
  FcPlan p;
  EXPECT_EQ(parse_fc_plan("ff2 Xt meshslice S=4/1/8 B=8/1/8", p), "ff2");
  EXPECT_EQ(p.stationary, Stationary::X);
  EXPECT_TRUE(p.transposed);
  EXPECT_EQ(p.gemms[0].options.slices, 4);
  EXPECT_EQ(p.gemms[1].options.slices, 1);
  EXPECT_EQ(p.gemms[2].options.slices, 8);
  EXPECT_EQ(p.gemms[1].options.block, 1);
  EXPECT_EQ(p.gemms[2].options.block, 8);
  parse_fc_plan("qkv Y summa S=2", p);
  for (const GemmChoice& g : p.gemms) {
    EXPECT_EQ(g.algorithm, Algorithm::summa);
    EXPECT_EQ(g.options.slices, 2);
    EXPECT_EQ(g.options.block, 1);
  }
  for (const char* bad :
       {"qkv Y meshslice S=4/2", "qkv Y meshslice S=4/0/2", "qkv Y meshslice S=4/",
        "qkv Y meshslice S=4x", "qkv Y meshslice B=2/2/2/2"})
    EXPECT_THROW(parse_fc_plan(bad, p), UserError) << bad;
}

TEST(LayerPlan, AnEntryReadsBackToItsPlan) {
  for (const char* entry : {"ff2 Xt meshslice S=4/1/8 B=8/1/8", "qkv W collective S=1 B=1",
                            "attn_out Yt wang S=2 B=4", "lm_head X summa S=2 B=1"}) {
    FcPlan p;
    const std::string layer = parse_fc_plan(entry, p);
    EXPECT_EQ(plan_entry(layer, p), entry);
  }
}

std::vector<std::string> block_entries() {
  return {"qkv Y meshslice S=2", "attn_out Y meshslice S=2", "ff1 Y meshslice S=2",
          "ff2 X meshslice S=2"};
}

// A message of the UserError `parse` throws ("" when none).
template <class Parse>
std::string error_of(Parse&& parse) {
  try {
    parse();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(LayerPlan, ALanguageModelsPlanNamesItsHead) {
  ModelShape lm;
  lm.hidden = 64;
  lm.vocab = 300;
  std::vector<std::string> entries = block_entries();
  EXPECT_NE(error_of([&] { parse_model_plan(entries, lm); }).find("lm_head is missing"),
            std::string::npos);
  entries.push_back("lm_head X summa S=4");
  const ModelPlan plan = parse_model_plan(entries, lm);
  ASSERT_TRUE(plan.lm_head.has_value());
  EXPECT_EQ(plan.lm_head->stationary, Stationary::X);
  EXPECT_EQ(plan.lm_head->gemms[2].algorithm, Algorithm::summa);
  EXPECT_EQ(plan.lm_head->gemms[2].options.slices, 4);
  // A model without a vocabulary has no head; a head reads and gives the standard layout; a tied
  // head is the embedding's table, W^T.
  ModelShape teacher = lm;
  teacher.vocab = 0;
  EXPECT_NE(error_of([&] { parse_model_plan(entries, teacher); }).find("no vocabulary"),
            std::string::npos);
  for (const char* head : {"lm_head W meshslice", "lm_head Yt meshslice", "lm_head Xt meshslice"}) {
    entries.back() = head;
    EXPECT_NE(error_of([&] { parse_model_plan(entries, lm); }).find("not W, not transposed"),
              std::string::npos)
        << head;
  }
  ModelShape tied = lm;
  tied.tied_head = true;
  entries.back() = "lm_head Y meshslice";
  EXPECT_NE(error_of([&] { parse_model_plan(entries, tied); }).find("runs X-stationary"),
            std::string::npos);
  entries.push_back("lm_head Y meshslice");
  EXPECT_NE(error_of([&] { parse_model_plan(entries, lm); }).find("appears twice"),
            std::string::npos);
}

TEST(LayerPlan, TheDefaultHeadTakesTheLargerOfXAndY) {
  ModelShape lm;
  lm.hidden = 64;
  lm.seq_len = 16;
  lm.sequences = 2;
  lm.vocab = 300;  // Y (T x V) larger than X (T x H)
  EXPECT_EQ(default_model_plan(lm, GemmChoice{}).lm_head->stationary, Stationary::Y);
  lm.vocab = 40;
  EXPECT_EQ(default_model_plan(lm, GemmChoice{}).lm_head->stationary, Stationary::X);
  lm.vocab = 300;
  lm.tied_head = true;
  EXPECT_EQ(default_model_plan(lm, GemmChoice{}).lm_head->stationary, Stationary::X);
  lm.vocab = 0;
  EXPECT_FALSE(default_model_plan(lm, GemmChoice{}).lm_head.has_value());
}

TEST(LayerPlan, TheDefaultIsPhase1WithAttentionInTheStandardLayout) {
  // Megatron-NLG's width on few tokens: W-stationary layers, transposed where they read standard.
  ModelShape shape;
  shape.hidden = 20480;
  shape.heads = 128;
  shape.seq_len = 2048;
  shape.sequences = 8;
  const ModelPlan plan = default_model_plan(shape, GemmChoice{});
  const auto gemms =
      sim::block_gemms(sim::megatron_nlg(), shape.tokens(), sim::AttentionLayout::standard);
  for (std::size_t k = 0; k < plan.blocks.size(); ++k) {
    EXPECT_EQ(plan[k].stationary, gemms[3 * k].stationary) << k;
    EXPECT_EQ(plan[k].transposed, gemms[3 * k].transposed) << k;
    // Every layer but FF2 reads the standard layout; FF2 reads FF1's output as FF1 gives it.
    EXPECT_EQ(plan[k].input(), k == 3 ? plan[2].output() : Layout::standard) << k;
  }
}

}  // namespace
}  // namespace meshslice
