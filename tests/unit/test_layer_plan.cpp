// The FC layers' plan (model/layer_plan.hpp): phase 1's default, and the plan entries decks and
// meshslice-tune's plan files write, per pass.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "model/layer_plan.hpp"
#include "sim/fc_layers.hpp"

namespace meshslice {
namespace {

TEST(LayerPlan, EntriesGiveSlicesAndBlocksPerPass) {
  FcPlan p;
  EXPECT_EQ(parse_fc_plan("ff2 Xt meshslice S=4/1/8 B=8/1/8", p), FcKind::ff2);
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
                            "attn_out Yt wang S=2 B=4"}) {
    FcPlan p;
    const FcKind kind = parse_fc_plan(entry, p);
    EXPECT_EQ(plan_entry(kind, p), entry);
  }
}

TEST(LayerPlan, TheDefaultIsPhase1WithAttentionInTheStandardLayout) {
  // Megatron-NLG's width on few tokens: W-stationary layers, transposed where they read standard.
  ModelShape shape;
  shape.hidden = 20480;
  shape.heads = 128;
  shape.seq_len = 2048;
  shape.sequences = 8;
  const BlockPlan plan = default_block_plan(shape, GemmChoice{});
  const auto gemms =
      sim::block_gemms(sim::megatron_nlg(), shape.tokens(), sim::AttentionLayout::standard);
  for (int k = 0; k < kFcKinds; ++k) {
    EXPECT_EQ(plan[k].stationary, gemms[3 * k].stationary) << k;
    EXPECT_EQ(plan[k].transposed, gemms[3 * k].transposed) << k;
    // Every layer but FF2 reads the standard layout; FF2 reads FF1's output as FF1 gives it.
    EXPECT_EQ(plan[k].input(), k == 3 ? plan[2].output() : Layout::standard) << k;
  }
}

}  // namespace
}  // namespace meshslice
