#include "model/model_shape_parameters.hpp"

#include <map>

#include "core/deck.hpp"
#include "core/errors.hpp"

namespace meshslice {

void add_model_shape_parameters(Teuchos::ParameterList& model,
                                const std::vector<ModelShapeKey>& keys) {
  static const std::map<std::string, std::string> meanings = {
      {"hidden", "hidden size H (heads x head size)"},
      {"heads", "attention heads"},
      {"kv_heads",
       "key and value heads, each shared by heads / kv_heads query heads (grouped-query "
       "attention, as Llama 2 70B and Mistral); must divide heads; 0 = heads (multi-head)"},
      {"blocks", "transformer blocks L"},
      {"seq_len", "tokens per sequence"},
      {"sequences", "sequences per data-parallel replica and step"},
      {"global_sequences", "sequences per step over all data-parallel replicas (the global batch)"},
      {"vocab", "a language model's vocabulary (token ids of its dataset)"}};
  for (const ModelShapeKey& key : keys) {
    const auto meaning = meanings.find(key.name);
    MESHSLICE_ASSERT(meaning != meanings.end(), "model.", key.name, " is not a model-shape key");
    model.set(key.name, key.default_value,
              key.note.empty() ? meaning->second : meaning->second + "; " + key.note);
  }
}

void add_mlp_parameters(Teuchos::ParameterList& model) {
  std::vector<std::string> names;
  std::string meanings;
  for (const MlpKind mlp : mlp_kinds()) {
    meanings += concat(names.empty() ? "" : "; ", mlp_name(mlp), " (", mlp_meaning(mlp), ")");
    names.push_back(mlp_name(mlp));
  }
  set_choice(model, "mlp", mlp_name(MlpKind::gelu), names,
             concat("the block's MLP: ", meanings,
                    "; a gated one's gate and up projections are one FF1 of 2 x ffn_hidden "
                    "outputs"));
  model.set("ffn_hidden", 0,
            "the MLP's width F (FF2's input); 0 = 4 x hidden for an ungated MLP, Llama's 8 x "
            "hidden / 3 rounded up to a multiple of 256 for a gated one");
}

MlpChoice mlp_from(const Teuchos::ParameterList& deck) {
  MlpChoice c;
  c.mlp = parse_mlp(get_param<std::string>(deck, "model.mlp"), "model.mlp");
  const int ffn = get_param<int>(deck, "model.ffn_hidden");
  require(ffn >= 0, "model.ffn_hidden = ", ffn, " must not be negative (0: the MLP's default)");
  c.ffn_hidden = static_cast<std::size_t>(ffn);
  return c;
}

}  // namespace meshslice
