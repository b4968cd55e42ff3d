#include "model/layer_plan.hpp"

#include <sstream>

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

FcKind parse_fc_plan(const std::string& entry, FcPlan& plan) {
  const std::string form = "write LAYER STATIONARY ALGORITHM [S=n] [B=n], e.g. 'ff1 W meshslice S=4'";
  std::istringstream in(entry);
  std::string layer, row, algorithm, option;
  require(static_cast<bool>(in >> layer >> row >> algorithm), "plan entry '", entry, "': ", form);
  FcKind kind;
  GemmChoice choice;
  try {
    kind = parse_fc_kind(layer);
    choice.algorithm = parse_algorithm(algorithm);
  } catch (const UserError& e) {
    throw UserError(concat("plan entry '", entry, "': ", e.what()));
  }
  const bool transposed = row.size() == 2 && row[1] == 't';
  const char r = row.empty() ? '?' : row[0];
  require((row.size() == 1 || transposed) && (r == 'Y' || r == 'X' || r == 'W'), "plan entry '",
          entry, "': unknown row of Table 1 '", row, "'; valid: Y, X, W (stationary), with a "
          "trailing t for the transposed variant (Yt, Xt, Wt)");
  plan.stationary = r == 'Y' ? Stationary::Y : r == 'X' ? Stationary::X : Stationary::W;
  plan.transposed = transposed;
  while (in >> option) {
    int value = 0;
    char extra = 0;
    const bool slices = option.rfind("S=", 0) == 0, block = option.rfind("B=", 0) == 0;
    std::istringstream number(option.substr(2));
    require((slices || block) && (number >> value) && !(number >> extra) && value >= 1,
            "plan entry '", entry, "': '", option, "' is not S=<slices> or B=<block> with a "
            "positive integer");
    (slices ? choice.options.slices : choice.options.block) = value;
  }
  plan.gemms = {choice, choice, choice};
  return kind;
}

BlockPlan parse_block_plan(const std::vector<std::string>& entries) {
  BlockPlan plan;
  std::array<bool, kFcKinds> seen{};
  for (const std::string& entry : entries) {
    FcPlan p;
    const FcKind kind = parse_fc_plan(entry, p);
    require(!seen[static_cast<int>(kind)], "plan: layer ", fc_name(kind), " appears twice");
    seen[static_cast<int>(kind)] = true;
    plan[static_cast<int>(kind)] = p;
  }
  for (int k = 0; k < kFcKinds; ++k)
    require(seen[k], "plan: layer ", fc_name(FcKind(k)), " is missing; an explicit plan names "
            "every layer (qkv, attn_out, ff1, ff2)");
  return plan;
}

}  // namespace meshslice
