// The block's layer list (model/block_layers.hpp): its parameters are ParamKind's in forward
// order (the seeding and the parameter set index them so), the gradients complete in the reverse
// order, and a recomputation runs the layers up to FF2, whose input GeLU makes.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "model/block_layers.hpp"

namespace meshslice {
namespace {

TEST(BlockLayers, ParametersInForwardOrderAreParamKinds) {
  int next = 0;
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.param) {
      EXPECT_EQ(static_cast<int>(layer.param->kind), next++) << layer.name;
    }
  EXPECT_EQ(next, kParamKinds);
}

// What each parameter is follows from its layer's declaration: the names checkpoints and
// reports have always used, the FC layers' shapes, and GPT-2's initial scales.
TEST(BlockLayers, ParametersFollowTheirLayers) {
  ModelShape s;
  s.hidden = 32;
  s.heads = 4;
  s.kv_heads = 2;
  s.blocks = 3;
  s.mlp = MlpKind::swiglu;
  s.ffn_hidden = 48;
  EXPECT_EQ(parameter_name(3, ParamKind::norm1_gain), "blocks.3.norm1.gain");
  EXPECT_EQ(parameter_name(0, ParamKind::ff2), "blocks.0.ff2.weight");
  EXPECT_EQ(param_kind_name(ParamKind::norm2_gain), "norm2_gain");
  EXPECT_EQ(param_kind_name(ParamKind::attn_out), "attn_out");
  const auto shape = [&](ParamKind kind) {
    const ParamShape p = param_shape(s, kind);
    return std::make_pair(p.rows, p.cols);
  };
  EXPECT_EQ(shape(ParamKind::norm2_gain), std::make_pair(std::size_t{1}, std::size_t{32}));
  EXPECT_EQ(shape(ParamKind::qkv), std::make_pair(std::size_t{32}, std::size_t{32 + 2 * 16}));
  EXPECT_EQ(shape(ParamKind::ff1), std::make_pair(std::size_t{32}, std::size_t{96}));
  EXPECT_EQ(shape(ParamKind::ff2), std::make_pair(std::size_t{48}, std::size_t{32}));
  EXPECT_TRUE(is_gain(ParamKind::norm1_gain));
  EXPECT_FALSE(is_gain(ParamKind::qkv));
  EXPECT_EQ(parameter_std(s, ParamKind::norm1_gain), 0.0);
  EXPECT_DOUBLE_EQ(parameter_std(s, ParamKind::qkv), 1 / std::sqrt(32.0));
  EXPECT_DOUBLE_EQ(parameter_std(s, ParamKind::ff2), 1 / std::sqrt(48.0) / std::sqrt(6.0));
  EXPECT_DOUBLE_EQ(parameter_std(s, ParamKind::attn_out), 1 / std::sqrt(32.0) / std::sqrt(6.0));
}

TEST(BlockLayers, GradientsCompleteInReverse) {
  const auto order = gradient_order();
  for (int i = 0; i < kParamKinds; ++i)
    EXPECT_EQ(static_cast<int>(order[static_cast<std::size_t>(i)]), kParamKinds - 1 - i);
}

TEST(BlockLayers, RecomputationStopsBeforeFf2) {
  ASSERT_LT(recomputed_layers(), block_layers().size());
  EXPECT_EQ(block_layers()[recomputed_layers()].layer, BlockLayer::ff2);
  EXPECT_EQ(block_layers()[recomputed_layers() - 1].layer, BlockLayer::activation);
}

}  // namespace
}  // namespace meshslice
