// The block's layer list (model/block_layers.hpp): its parameters are ParamKind's in forward
// order (the seeding and the parameter set index them so), the gradients complete in the reverse
// order, and a recomputation runs the layers up to FF2, whose input GeLU makes.
#include <gtest/gtest.h>

#include "model/block_layers.hpp"

namespace meshslice {
namespace {

TEST(BlockLayers, ParametersInForwardOrderAreParamKinds) {
  int next = 0;
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.trains) {
      EXPECT_EQ(static_cast<int>(layer.param), next++) << layer.name;
    }
  EXPECT_EQ(next, kParamKinds);
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
