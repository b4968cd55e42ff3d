#include "model/model_shape_record.hpp"

#include "core/errors.hpp"

namespace meshslice {
namespace {

// One field of ModelShape: a count, a flag or the MLP's kind, with its key (trainer.json's, and
// the deck's model.<key>).
struct Field {
  enum class Kind { count, flag, mlp };
  // Named member pointers (nvcc's host pass warns of the parentheses of a spelled-out one).
  using Count = std::size_t ModelShape::*;
  using Flag = bool ModelShape::*;
  using Resolve = std::size_t (ModelShape::*)() const;  // a count's value by its default rule
  const char* key;
  Kind kind;
  Count count = nullptr;
  Flag flag = nullptr;
  Resolve resolved = nullptr;
  bool in_every_format = false;  // else a later format added it
  bool architecture = true;      // a resumed run must keep it
};

const Field kFields[] = {
    {"hidden", Field::Kind::count, &ModelShape::hidden, nullptr, nullptr, true},
    {"heads", Field::Kind::count, &ModelShape::heads, nullptr, nullptr, true},
    {"kv_heads", Field::Kind::count, &ModelShape::kv_heads, nullptr, &ModelShape::kv},
    {"blocks", Field::Kind::count, &ModelShape::blocks, nullptr, nullptr, true},
    {"seq_len", Field::Kind::count, &ModelShape::seq_len, nullptr, nullptr, true, false},
    {"sequences", Field::Kind::count, &ModelShape::sequences, nullptr, nullptr, true, false},
    {"rope", Field::Kind::flag, nullptr, &ModelShape::rope},
    {"vocab", Field::Kind::count, &ModelShape::vocab},
    {"tied_head", Field::Kind::flag, nullptr, &ModelShape::tied_head},
    {"mlp", Field::Kind::mlp},
    {"ffn_hidden", Field::Kind::count, &ModelShape::ffn_hidden, nullptr, &ModelShape::ffn},
};

json::Value recorded(const Field& f, const ModelShape& m) {
  switch (f.kind) {
    case Field::Kind::count: return f.resolved ? (m.*f.resolved)() : m.*f.count;
    case Field::Kind::flag: return m.*f.flag;
    case Field::Kind::mlp: return mlp_name(m.mlp);
  }
  return {};
}

std::string text(const Field& f, const ModelShape& m) {
  const json::Value v = recorded(f, m);
  return v.is_string() ? v.as_string() : v.dump();
}

}  // namespace

json::Value model_shape_json(const ModelShape& shape) {
  json::Value v = json::Value::object();
  for (const Field& f : kFields) v.set(f.key, recorded(f, shape));
  return v;
}

ModelShape model_shape_from_json(const json::Value& record) {
  ModelShape m;
  for (const Field& f : kFields) {
    const json::Value* v = f.in_every_format ? &record.at(f.key) : record.find(f.key);
    if (v == nullptr) continue;
    switch (f.kind) {
      case Field::Kind::count: m.*f.count = v->as_uint(); break;
      case Field::Kind::flag: m.*f.flag = v->as_bool(); break;
      case Field::Kind::mlp: m.mlp = parse_mlp(v->as_string(), "trainer.json's model.mlp"); break;
    }
  }
  return m;
}

std::optional<ShapeChange> architecture_change(const ModelShape& saved, const ModelShape& now) {
  for (const Field& f : kFields)
    if (f.architecture && text(f, saved) != text(f, now))
      return ShapeChange{f.key, text(f, saved), text(f, now)};
  return std::nullopt;
}

void require_resumable(const std::string& path, const json::Value& saved, const ModelShape& now) {
  // The shape as the checkpoint's format records it (keys added later: their value before).
  if (const std::optional<ShapeChange> change =
          architecture_change(model_shape_from_json(saved), now))
    throw UserError(concat("checkpoint ", path, " holds a model with model.", change->key, " = ",
                           change->was, ", the deck asks for model.", change->key, " = ",
                           change->wants, ": the model's shape cannot change on resume (set model.",
                           change->key, " to ", change->was,
                           ", or start afresh without --resume)"));
}

ModelShape recorded_model_shape(const std::string& path, const json::Value& record) {
  try {
    return model_shape_from_json(record);
  } catch (const json::Error& e) {
    throw UserError(
        concat(path, "/trainer.json's model is not a meshslice model's shape: ", e.what()));
  }
}

}  // namespace meshslice
