#include "model/layer_plan.hpp"

#include <algorithm>
#include <sstream>

#include "core/errors.hpp"

namespace meshslice {

const char* layout_name(Layout layout) {
  return layout == Layout::standard ? "tokens/row hidden/col" : "hidden/row tokens/col";
}

std::size_t fc_inputs(const ModelShape& shape, FcKind kind) {
  return block_fc_layers(shape.dims())[kind].in;
}
std::size_t fc_outputs(const ModelShape& shape, FcKind kind) {
  return block_fc_layers(shape.dims())[kind].out;
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

ModelPlan default_model_plan(const ModelShape& shape, const GemmChoice& choice) {
  // Attention gives its output in the standard layout, whatever QKV's.
  const auto flows =
      choose_dataflows(shape.tokens(), block_chain(block_fc_layers(shape.dims()), false));
  ModelPlan plan;
  for (std::size_t k = 0; k < plan.blocks.size(); ++k) {
    plan[k].stationary = flows[k].stationary;
    plan[k].transposed = flows[k].transposed;
    plan[k].gemms = {choice, choice, choice};
  }
  if (shape.vocab > 0) {
    FcPlan head;
    head.stationary =
        shape.tied_head ? Stationary::X : choose_standard_stationary(shape.hidden, shape.vocab);
    head.gemms = {choice, choice, choice};
    plan.lm_head = head;
  }
  return plan;
}

void check_lm_head_plan(const ModelShape& shape, const ModelPlan& plan) {
  if (shape.vocab == 0) {
    require(!plan.lm_head, "plan: layer ", kLmHeadName,
            " is for a language model (train.task = "
            "lm); this model has no vocabulary: drop the entry");
    return;
  }
  require(plan.lm_head.has_value(), "plan: layer ", kLmHeadName,
          " is missing; an explicit plan "
          "of a language model names it too, e.g. '",
          kLmHeadName, " Y meshslice S=2'");
  const FcPlan& head = *plan.lm_head;
  require(!head.transposed && head.stationary != Stationary::W,
          "plan: ", plan_entry(kLmHeadName, head),
          ": the head reads the final norm and gives the "
          "cross-entropy its logits in the standard layout, so it runs Y or X (not W, not "
          "transposed)");
  require(!shape.tied_head || head.stationary == Stationary::X,
          "plan: ", plan_entry(kLmHeadName, head),
          ": a tied head (model.tied_head) shares the embedding's "
          "table, kept as W^T, so it runs X-stationary");
}

std::string parse_fc_plan(const std::string& entry, FcPlan& plan) {
  const std::string form =
      "write LAYER STATIONARY ALGORITHM [S=n] [B=n], e.g. 'ff1 W meshslice S=4'";
  std::istringstream in(entry);
  std::string layer, row, algorithm, option;
  require(static_cast<bool>(in >> layer >> row >> algorithm), "plan entry '", entry, "': ", form);
  GemmChoice choice;
  try {
    if (layer != kLmHeadName) parse_fc_kind(layer);
    choice.algorithm = parse_algorithm(algorithm);
  } catch (const UserError& e) {
    throw UserError(concat("plan entry '", entry, "': ", e.what()));
  }
  const bool transposed = row.size() == 2 && row[1] == 't';
  const char r = row.empty() ? '?' : row[0];
  require((row.size() == 1 || transposed) && (r == 'Y' || r == 'X' || r == 'W'), "plan entry '",
          entry, "': unknown row of Table 1 '", row,
          "'; valid: Y, X, W (stationary), with a "
          "trailing t for the transposed variant (Yt, Xt, Wt)");
  plan.stationary = r == 'Y' ? Stationary::Y : r == 'X' ? Stationary::X : Stationary::W;
  plan.transposed = transposed;
  plan.gemms = {choice, choice, choice};
  while (in >> option) {
    const bool slices = option.rfind("S=", 0) == 0, block = option.rfind("B=", 0) == 0;
    // S=n (B=n) for all three passes, or S=fwd/bwd_data/bwd_weight.
    std::istringstream numbers(option.substr(2));
    std::vector<int> values;
    int value = 0;
    char separator = '/';
    while (separator == '/' && (numbers >> value)) {
      values.push_back(value);
      separator = 0;
      numbers >> separator;
    }
    const bool whole = numbers.eof() && separator == 0;
    require((slices || block) && whole && (values.size() == 1 || values.size() == 3) &&
                *std::min_element(values.begin(), values.end()) >= 1,
            "plan entry '", entry, "': '", option,
            "' is not S=<slices> or B=<block>, for all "
            "passes or as <fwd>/<bwd_data>/<bwd_weight>, with positive integers");
    for (int p = 0; p < 3; ++p) {
      GemmOptions& o = plan.gemms[p].options;
      (slices ? o.slices : o.block) = values[values.size() == 3 ? p : 0];
    }
  }
  return layer;
}

std::string plan_entry(const std::string& layer, const FcPlan& plan) {
  // "n" when the three passes agree, "fwd/bwd_data/bwd_weight" otherwise.
  const auto per_pass = [&plan](int GemmOptions::*field) {
    const auto& g = plan.gemms;
    const int f = g[0].options.*field, d = g[1].options.*field, w = g[2].options.*field;
    return f == d && d == w ? std::to_string(f) : concat(f, "/", d, "/", w);
  };
  const char row = "YXW"[static_cast<int>(plan.stationary)];
  return concat(layer, " ", row, plan.transposed ? "t" : "", " ",
                algorithm_name(plan.gemms[0].algorithm), " S=", per_pass(&GemmOptions::slices),
                " B=", per_pass(&GemmOptions::block));
}

ModelPlan parse_model_plan(const std::vector<std::string>& entries, const ModelShape& shape) {
  ModelPlan plan;
  std::vector<bool> seen(plan.blocks.size());
  for (const std::string& entry : entries) {
    FcPlan p;
    const std::string layer = parse_fc_plan(entry, p);
    if (layer == kLmHeadName) {
      require(!plan.lm_head, "plan: layer ", layer, " appears twice");
      plan.lm_head = p;
      continue;
    }
    const auto k = static_cast<std::size_t>(parse_fc_kind(layer));
    require(!seen[k], "plan: layer ", layer, " appears twice");
    seen[k] = true;
    plan[k] = p;
  }
  for (std::size_t k = 0; k < seen.size(); ++k)
    require(seen[k], "plan: layer ", fc_name(FcKind(k)),
            " is missing; an explicit plan names every layer (", fc_layer_names(),
            ", and a language model's ", kLmHeadName, ")");
  check_lm_head_plan(shape, plan);
  return plan;
}

}  // namespace meshslice
