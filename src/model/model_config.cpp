#include "model/model_config.hpp"

#include "core/errors.hpp"

namespace meshslice {

const char* param_kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::norm1_gain: return "norm1_gain";
    case ParamKind::qkv: return "qkv";
    case ParamKind::attn_out: return "attn_out";
    case ParamKind::norm2_gain: return "norm2_gain";
    case ParamKind::ff1: return "ff1";
    case ParamKind::ff2: return "ff2";
  }
  return "?";
}

ParamShape param_shape(const ModelShape& s, ParamKind kind) {
  switch (kind) {
    case ParamKind::norm1_gain:
    case ParamKind::norm2_gain: return {1, s.hidden};
    case ParamKind::qkv: return {s.hidden, 3 * s.hidden};
    case ParamKind::attn_out: return {s.hidden, s.hidden};
    case ParamKind::ff1: return {s.hidden, s.ffn()};
    case ParamKind::ff2: return {s.ffn(), s.hidden};
  }
  return {};
}

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::sgd ? "sgd" : "adamw";
}

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "adamw") return OptimizerKind::adamw;
  throw UserError(concat("unknown optimizer '", name, "'; valid optimizers: sgd, adamw"));
}

}  // namespace meshslice
