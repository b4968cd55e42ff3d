#include "model/model_shape_parameters.hpp"

#include <map>

#include "core/errors.hpp"

namespace meshslice {

void add_model_shape_parameters(Teuchos::ParameterList& model,
                                const std::vector<ModelShapeKey>& keys) {
  static const std::map<std::string, std::string> meanings = {
      {"hidden", "hidden size H (heads x head size)"},
      {"heads", "attention heads"},
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

}  // namespace meshslice
