#pragma once
// ModelShape as a checkpoint's trainer.json records it ("model": {"hidden": 64, ...}), and the
// fields a resumed run must keep. Both read one list of the shape's fields
// (model_shape_record.cpp), so a new field of the model is a line there. The checkpoint stores
// the record and asks the model whether a saved one fits (checkpoint/checkpoint.hpp's ModelFits).
//
//     facts.model = model_shape_json(shape);
//     const ModelShape saved = model_shape_from_json(record);
//     if (const auto change = architecture_change(saved, now)) ... change->key ...
//     require_resumable(path, record, now);   // UserError naming the key that changed
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

// UserError, naming the key and the fix, when a run of `now` cannot resume the checkpoint at
// `path`, whose record is `saved` (json::Error for a malformed record).
void require_resumable(const std::string& path, const json::Value& saved, const ModelShape& now);
// The shape the checkpoint at `path` recorded; UserError naming it for a malformed record.
ModelShape recorded_model_shape(const std::string& path, const json::Value& record);

}  // namespace meshslice
