#include "model/layer_plan.hpp"

#include "core/errors.hpp"

namespace meshslice {

const char* layout_name(Layout layout) {
  return layout == Layout::standard ? "tokens/row hidden/col" : "hidden/row tokens/col";
}

const char* fc_name(FcKind kind) {
  switch (kind) {
    case FcKind::qkv: return "qkv";
    case FcKind::attn_out: return "attn_out";
    case FcKind::ff1: return "ff1";
    case FcKind::ff2: return "ff2";
  }
  return "?";
}

FcKind parse_fc_kind(const std::string& name) {
  for (int k = 0; k < kFcKinds; ++k)
    if (name == fc_name(FcKind(k))) return FcKind(k);
  throw UserError(concat("unknown FC layer '", name, "'; valid layers: qkv, attn_out, ff1, ff2"));
}

ParamKind fc_param(FcKind kind) {
  switch (kind) {
    case FcKind::qkv: return ParamKind::qkv;
    case FcKind::attn_out: return ParamKind::attn_out;
    case FcKind::ff1: return ParamKind::ff1;
    case FcKind::ff2: return ParamKind::ff2;
  }
  return ParamKind::qkv;
}

std::size_t fc_inputs(const ModelShape& shape, FcKind kind) {
  return param_shape(shape, fc_param(kind)).rows;
}
std::size_t fc_outputs(const ModelShape& shape, FcKind kind) {
  return param_shape(shape, fc_param(kind)).cols;
}

Layout FcPlan::input() const {
  const bool untransposed_takes_transposed = stationary == Stationary::W;
  return untransposed_takes_transposed != transposed ? Layout::transposed : Layout::standard;
}

Layout FcPlan::output() const { return transposed ? Layout::transposed : Layout::standard; }

bool FcPlan::weight_transposed() const { return (stationary == Stationary::X) != transposed; }

std::string FcPlan::str() const {
  std::string s = concat(stationary_name(stationary), transposed ? " transposed" : "");
  for (int p = 0; p < 3; ++p)
    s += concat(p == 0 ? ": " : ", ", pass_name(Pass(p)), " ", algorithm_name(gemms[p].algorithm),
                " S=", gemms[p].options.slices, " B=", gemms[p].options.block);
  return s;
}

bool transposed_for_input(Stationary s, Layout wanted) {
  const bool takes_transposed = s == Stationary::W;
  return takes_transposed != (wanted == Layout::transposed);
}

BlockPlan default_block_plan(const ModelShape& shape, const GemmChoice& choice) {
  BlockPlan plan;
  Layout next_input = Layout::standard;
  for (int k = 0; k < kFcKinds; ++k) {
    const FcKind kind = FcKind(k);
    FcPlan& p = plan[k];
    p.stationary = choose_stationary(shape.tokens(), fc_inputs(shape, kind), fc_outputs(shape, kind));
    // Only FF2 reads another layer's output directly (through GeLU); the others read the
    // residual stream's norm or attention, both standard.
    const Layout wanted = kind == FcKind::ff2 ? next_input : Layout::standard;
    p.transposed = transposed_for_input(p.stationary, wanted);
    p.gemms = {choice, choice, choice};
    next_input = p.output();
  }
  return plan;
}

}  // namespace meshslice
