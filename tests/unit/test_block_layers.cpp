// The block's layer list (model/block_layers.hpp), its modules' (block/block_module.hpp) in
// order: its parameters are numbered in forward order (the seeding and the parameter set index
// them so: the numbers are fixed), each layer is its module's layer of the same place, the FC
// layers are the modules' in order, the gradients complete in the reverse order, and a
// recomputation runs the layers up to FF2, whose input GeLU makes.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "block/attention_layers.hpp"
#include "block/mlp_layers.hpp"
#include "core/errors.hpp"
#include "model/block_layers.hpp"

namespace meshslice {
namespace {

TEST(BlockLayers, ParametersInForwardOrderAreParamKinds) {
  int next = 0;
  for (const BlockLayerSpec& layer : block_layers())
    if (layer.param) {
      EXPECT_EQ(static_cast<int>(layer.param->kind), next++) << layer.name;
    }
  EXPECT_EQ(static_cast<std::size_t>(next), block_param_count());
  for (std::size_t k = 0; k < block_param_count(); ++k)
    EXPECT_EQ(block_param_kinds()[k], ParamKind(k));
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
  const ParamKind norm1 = block_param(AttentionParam::norm_gain),
                  qkv = block_param(AttentionParam::qkv), out = block_param(AttentionParam::out),
                  norm2 = block_param(MlpParam::norm_gain), ff1 = block_param(MlpParam::ff1),
                  ff2 = block_param(MlpParam::ff2);
  EXPECT_EQ(parameter_name(3, norm1), "blocks.3.norm1.gain");
  EXPECT_EQ(parameter_name(0, ff2), "blocks.0.ff2.weight");
  EXPECT_EQ(param_kind_name(norm2), "norm2_gain");
  EXPECT_EQ(param_kind_name(out), "attn_out");
  const auto shape = [&](ParamKind kind) {
    const ParamShape p = param_shape(s, kind);
    return std::make_pair(p.rows, p.cols);
  };
  EXPECT_EQ(shape(norm2), std::make_pair(std::size_t{1}, std::size_t{32}));
  EXPECT_EQ(shape(qkv), std::make_pair(std::size_t{32}, std::size_t{32 + 2 * 16}));
  EXPECT_EQ(shape(ff1), std::make_pair(std::size_t{32}, std::size_t{96}));
  EXPECT_EQ(shape(ff2), std::make_pair(std::size_t{48}, std::size_t{32}));
  EXPECT_TRUE(is_gain(norm1));
  EXPECT_FALSE(is_gain(qkv));
  EXPECT_EQ(parameter_std(s, norm1), 0.0);
  EXPECT_DOUBLE_EQ(parameter_std(s, qkv), 1 / std::sqrt(32.0));
  EXPECT_DOUBLE_EQ(parameter_std(s, ff2), 1 / std::sqrt(48.0) / std::sqrt(6.0));
  EXPECT_DOUBLE_EQ(parameter_std(s, out), 1 / std::sqrt(32.0) / std::sqrt(6.0));
}

TEST(BlockLayers, GradientsCompleteInReverse) {
  const std::vector<ParamKind> order = gradient_order();
  ASSERT_EQ(order.size(), block_param_count());
  for (std::size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(order[i]), order.size() - 1 - i);
}

TEST(BlockLayers, AreTheModulesLayersInOrder) {
  const std::vector<BlockLayerSpec>& layers = block_layers();
  ASSERT_EQ(layers.size(), 10u);
  const char* names[] = {"norm1", "qkv", "attention",  "attn_out", "attn_residual",
                         "norm2", "ff1", "activation", "ff2",      "ff_residual"};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    EXPECT_STREQ(layers[i].name, names[i]);
    const std::size_t owner = i < 5 ? 0 : 1;  // attention's, then the MLP's
    EXPECT_EQ(layers[i].module, owner) << names[i];
    EXPECT_EQ(layers[i].layer, static_cast<int>(i % 5)) << names[i];
    EXPECT_STREQ(block_modules()[owner].layers[i % 5].name, names[i]);
  }
  // The modules' layer enums name the places of their declarations.
  ASSERT_EQ(block_modules().size(), 2u);
  EXPECT_STREQ(block_modules()[0].name, "attention");
  EXPECT_STREQ(block_modules()[0].layers[int(AttentionLayer::out)].name, "attn_out");
  EXPECT_STREQ(block_modules()[1].name, "mlp");
  EXPECT_STREQ(block_modules()[1].layers[int(MlpLayer::activation)].name, "activation");
}

// Each module's parameter enum numbers its own parameters from the module's first: the block's
// numbers are the modules' in turn, and the ones the seeding has always used (norm1's gain 0 to
// FF2's weight 5: a checkpoint's tensors and every initial value depend on them).
TEST(BlockLayers, ModulesNumberTheirOwnParameters) {
  EXPECT_EQ(first_parameter(0), 0u);
  EXPECT_EQ(first_parameter(1), 3u);
  EXPECT_EQ(module_place(module_declaring(AttentionParam::qkv)), 0u);
  EXPECT_EQ(module_place(module_declaring(MlpParam::ff1)), 1u);
  const BlockModuleSpec unlisted{"unlisted", {}, nullptr, nullptr, nullptr};
  EXPECT_THROW(module_place(unlisted), InternalError);
  EXPECT_EQ(block_param(AttentionParam::norm_gain), ParamKind(0));
  EXPECT_EQ(block_param(AttentionParam::qkv), ParamKind(1));
  EXPECT_EQ(block_param(AttentionParam::out), ParamKind(2));
  EXPECT_EQ(block_param(MlpParam::norm_gain), ParamKind(3));
  EXPECT_EQ(block_param(MlpParam::ff1), ParamKind(4));
  EXPECT_EQ(block_param(MlpParam::ff2), ParamKind(5));
  EXPECT_EQ(block_param_count(), 6u);
  EXPECT_EQ(layer_training(block_param(MlpParam::ff1)).module, 1u);
  EXPECT_STREQ(layer_training(block_param(AttentionParam::out)).name, "attn_out");
}

// The block's FC layers are its modules' in order, numbered as they come (FcKind), with the
// sizes they declare; each module names its own by its FC enum.
TEST(BlockLayers, FcLayersAreTheModulesInOrder) {
  BlockDims d;
  d.hidden = 64;
  d.ffn = 96;
  d.mlp = MlpKind::swiglu;
  d.kv_hidden = 16;
  const FcLayerList layers = block_fc_layers(d);
  const char* names[] = {"qkv", "attn_out", "ff1", "ff2"};
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(block_fc_count(), 4u);
  for (std::size_t k = 0; k < layers.size(); ++k) {
    EXPECT_EQ(layers[k].kind, FcKind(k));
    EXPECT_STREQ(layers[k].name, names[k]);
  }
  EXPECT_EQ(first_fc_layer(0), 0u);
  EXPECT_EQ(first_fc_layer(1), 2u);
  EXPECT_EQ(block_fc(AttentionFc::qkv), FcKind(0));
  EXPECT_EQ(block_fc(AttentionFc::out), FcKind(1));
  EXPECT_EQ(block_fc(MlpFc::ff1), FcKind(2));
  EXPECT_EQ(block_fc(MlpFc::ff2), FcKind(3));
  EXPECT_EQ(layers[block_fc(AttentionFc::qkv)].out, 64u + 2 * 16);
  EXPECT_EQ(layers[block_fc(MlpFc::ff1)].out, 2 * 96u);
  EXPECT_EQ(layers[block_fc(MlpFc::ff2)].in, 96u);
  EXPECT_TRUE(layers[1].adds_to_residual && layers[3].adds_to_residual);
  // A weight's FC layer is its module's layer of the number it declares.
  EXPECT_EQ(layer_training(block_param(AttentionParam::out)).param->fc, block_fc(AttentionFc::out));
  EXPECT_EQ(layer_training(block_param(MlpParam::ff1)).param->fc, block_fc(MlpFc::ff1));
  // A module adds its layers in its enum's order, from its first.
  FcLayerList list;
  list.add(AttentionFc::qkv, layers[0]);
  EXPECT_THROW(list.add(AttentionFc::qkv, layers[0]), InternalError);  // its second is number 1
  list.begin_module();
  EXPECT_THROW(list.add(MlpFc::ff2, layers[3]), InternalError);  // the next module's first is 0
  list.add(MlpFc::ff1, layers[2]);
  EXPECT_EQ(list[1].kind, FcKind(1));
  FcLayerList reads_nothing;  // a first layer reading the previous layer's output
  EXPECT_THROW(reads_nothing.add(MlpFc::ff1, {"ff2", 8, 8, BlockFcLayer::Input::previous}),
               InternalError);
  FcLayerList full;
  for (std::size_t k = 0; k < FcLayerList::kCapacity; ++k) full.add(k, layers[0]);
  EXPECT_THROW(full.add(FcLayerList::kCapacity, layers[0]), InternalError);
  // A deck's per-layer keys name the layers; an unknown one lists every layer the modules
  // declare and the language model's head.
  EXPECT_EQ(parse_fc_kind("ff1"), block_fc(MlpFc::ff1));
  EXPECT_EQ(fc_layer_names(), "qkv, attn_out, ff1, ff2");
  try {
    parse_fc_kind("ff3");
    ADD_FAILURE() << "ff3 parsed";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown FC layer 'ff3'; valid layers: qkv, attn_out, ff1, ff2, lm_head");
  }
}

// What a block keeps: its input and residual stream (2H) and its modules' widths.
TEST(BlockLayers, SavedWidthsSumTheModules) {
  BlockDims d;
  d.hidden = 64;
  d.ffn = 256;
  const BlockSavedWidths w = block_saved_widths(d);
  EXPECT_EQ(w.kept, 2 * 64.0 + 64);                 // and attention's output
  EXPECT_EQ(w.maybe_aliased, 64.0);                 // attn_out's input
  EXPECT_EQ(w.in_bf16, 4 * 64.0 + 64 + 256 + 256);  // QKV's input and output; FF1's, FF2's input
}

// A block's step outside its FC GEMMs on a chip: two norms and residual adds, K and V repeated
// and their gradients summed (grouped), attention's passes and the MLP's activation, each
// counted once whichever module declares it.
TEST(BlockLayers, NonFcWorkIsTheModulesKernels) {
  using namespace kernel_work;
  BlockShard s;
  s.attention = {2, 64, 4, 16, true, AttentionKernel::blas_blocks};
  s.tokens = 128;
  s.hidden = 64;
  s.ffn = 128 * 96;
  s.mlp = MlpKind::swiglu;
  s.kv_hidden = 32;
  const double n = s.tokens * s.hidden, wide = s.tokens * 3 * s.hidden;
  const double narrow = s.tokens * (s.hidden + 2 * s.kv_hidden);
  const BlockWork w = block_non_fc_work(s);
  EXPECT_EQ(w.forward.elements, 2 * (rmsnorm_sums(n).elements + rmsnorm_apply(n).elements +
                                     residual(n, true).elements) +
                                    repeat_kv(wide).elements + s.attention.forward_work().elements +
                                    mlp_activation(s.mlp, s.ffn).elements);
  EXPECT_EQ(w.backward.elements,
            2 * (rmsnorm_backward_partials(n).elements + rmsnorm_backward_apply(n).elements +
                 residual(n, false).elements) +
                sum_kv(wide, narrow).elements + s.attention.backward_work().elements +
                mlp_activation_backward(s.mlp, s.ffn).elements);
  EXPECT_EQ(w.forward.gemms.size(), s.attention.forward_work().gemms.size());
  EXPECT_EQ(w.backward.gemms.size(), s.attention.backward_work().gemms.size());
}

// A recomputation's saved set may keep a module's tensor in the norm's staging buffer only where
// no later module writes that buffer again before the backward pass: one that stages a norm's
// output there, or one that keeps its own tensor there (then the earlier ones may not).
TEST(BlockLayers, NormedBufferIsOfferedWhereNoLaterModuleWritesIt) {
  using U = NormedUse;
  using Offers = std::vector<bool>;
  // Attention keeps QKV's input there; the MLP keeps nothing there, or stages a transposed input.
  EXPECT_EQ(normed_offers({U::keeps_if_offered, U::none}), (Offers{true, true}));
  EXPECT_EQ(normed_offers({U::keeps_if_offered, U::stages}), (Offers{false, true}));
  EXPECT_EQ(normed_offers({U::stages, U::none}), (Offers{true, true}));
  // Two modules that keep a tensor there: only the later one may.
  EXPECT_EQ(normed_offers({U::keeps_if_offered, U::none, U::keeps_if_offered}),
            (Offers{false, false, true}));
  EXPECT_EQ(normed_offers({U::keeps_if_offered, U::keeps_if_offered, U::stages}),
            (Offers{false, false, true}));
  EXPECT_EQ(normed_offers({}), Offers{});
}

TEST(BlockLayers, RecomputationStopsBeforeFf2) {
  ASSERT_LT(recomputed_layers(), block_layers().size());
  EXPECT_STREQ(block_layers()[recomputed_layers()].name, "ff2");
  EXPECT_STREQ(block_layers()[recomputed_layers() - 1].name, "activation");
}

}  // namespace
}  // namespace meshslice
