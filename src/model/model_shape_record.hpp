#pragma once
// ModelShape as a checkpoint's trainer.json records it ("model": {"hidden": 64, ...}), and the
// fields a resumed run must keep. Both read one list of the shape's fields
// (model_shape_record.cpp), so a new field of the model is a line there.
//
//     root.set("model", model_shape_json(shape));
//     const ModelShape saved = model_shape_from_json(root.at("model"));
//     if (const auto change = architecture_change(saved, now)) ... change->key ...
#include <optional>
#include <string>

#include "core/json.hpp"
#include "model/model_config.hpp"

namespace meshslice {

// The fields in order, kv_heads and ffn_hidden resolved (model.kv(), model.ffn()), so that a
// record reads back as the same model whatever later defaults become.
json::Value model_shape_json(const ModelShape& shape);
// A record's shape; a field that a record made before it existed lacks takes ModelShape's
// default (the teacher task's GPT block). json::Error for a record without a field every
// format has, or of the wrong kind.
ModelShape model_shape_from_json(const json::Value& record);

// The first field a resumed run must keep (the architecture; not the batch's shape) that
// differs, with both values as a deck writes them; none when the architecture is the same.
struct ShapeChange {
  std::string key;  // model.<key>
  std::string was, wants;
};
std::optional<ShapeChange> architecture_change(const ModelShape& saved, const ModelShape& now);

}  // namespace meshslice
