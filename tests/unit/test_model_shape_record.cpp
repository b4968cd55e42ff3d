// ModelShape as trainer.json records it (model/model_shape_record.hpp): every field reads back,
// a record of an older format takes the defaults of the fields it lacks, and a resume is told
// the first field of the architecture that changed, but not a change of the batch's shape.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "model/model_shape_record.hpp"

namespace meshslice {
namespace {

ModelShape llama_like() {
  ModelShape s;
  s.hidden = 96;
  s.heads = 6;
  s.kv_heads = 2;
  s.blocks = 3;
  s.seq_len = 32;
  s.sequences = 5;
  s.rope = true;
  s.vocab = 257;
  s.tied_head = true;
  s.mlp = MlpKind::swiglu;
  s.ffn_hidden = 256;
  return s;
}

TEST(ModelShapeRecord, EveryFieldReadsBackInOrder) {
  const ModelShape s = llama_like();
  const json::Value record = model_shape_json(s);
  EXPECT_EQ(record.dump(),
            R"({"hidden":96,"heads":6,"kv_heads":2,"blocks":3,"seq_len":32,"sequences":5,)"
            R"("rope":true,"vocab":257,"tied_head":true,"mlp":"swiglu","ffn_hidden":256})");
  const ModelShape back = model_shape_from_json(json::parse(record.dump()));
  EXPECT_EQ(model_shape_json(back).dump(), record.dump());
  EXPECT_FALSE(architecture_change(s, back).has_value());
}

TEST(ModelShapeRecord, DefaultsAreRecordedResolved) {
  ModelShape s;  // kv_heads 0 (one per head), ffn_hidden 0 (4H for GeLU)
  const json::Value record = model_shape_json(s);
  EXPECT_EQ(record.at("kv_heads").as_uint(), s.heads);
  EXPECT_EQ(record.at("ffn_hidden").as_uint(), 4 * s.hidden);
  EXPECT_EQ(record.at("mlp").as_string(), "gelu");
}

TEST(ModelShapeRecord, AnOlderRecordTakesTheDefaultsOfLaterFields) {
  const ModelShape s = model_shape_from_json(
      json::parse(R"({"hidden":64,"heads":4,"blocks":2,"seq_len":16,"sequences":4})"));
  EXPECT_EQ(s.hidden, 64u);
  EXPECT_EQ(s.vocab, 0u);
  EXPECT_FALSE(s.rope);
  EXPECT_FALSE(s.tied_head);
  EXPECT_EQ(s.mlp, MlpKind::gelu);
  EXPECT_EQ(s.kv(), s.heads);
  EXPECT_EQ(s.ffn(), 4 * s.hidden);
  EXPECT_THROW(model_shape_from_json(json::parse(R"({"hidden":64,"heads":4})")), json::Error);
}

TEST(ModelShapeRecord, AResumeKeepsTheArchitectureNotTheBatch) {
  const ModelShape saved = llama_like();
  ModelShape now = saved;
  now.seq_len = 64;
  now.sequences = 2;
  EXPECT_FALSE(architecture_change(saved, now).has_value());
  now.mlp = MlpKind::gelu;
  now.ffn_hidden = 0;
  const auto change = architecture_change(saved, now);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->key, "mlp");
  EXPECT_EQ(change->was, "swiglu");
  EXPECT_EQ(change->wants, "gelu");
  now = saved;
  now.kv_heads = 0;  // one per head: 6, not 2
  ASSERT_TRUE(architecture_change(saved, now).has_value());
  EXPECT_EQ(architecture_change(saved, now)->key, "kv_heads");
  EXPECT_EQ(architecture_change(saved, now)->wants, "6");
  now = saved;
  now.tied_head = false;
  EXPECT_EQ(architecture_change(saved, now)->was, "true");
}

}  // namespace
}  // namespace meshslice
