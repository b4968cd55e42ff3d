#include "model/model_shape_parameters.hpp"

namespace meshslice {

void add_model_shape_parameters(Teuchos::ParameterList& model, const ModelShapeKeys& defaults,
                                const std::map<std::string, std::string>& notes) {
  const auto add = [&](const char* key, const std::optional<int>& value, const char* meaning) {
    if (!value) return;
    const auto note = notes.find(key);
    model.set(key, *value, note == notes.end() ? meaning : meaning + ("; " + note->second));
  };
  add("hidden", defaults.hidden, "hidden size H (heads x head size)");
  add("heads", defaults.heads, "attention heads");
  add("blocks", defaults.blocks, "transformer blocks L");
  add("seq_len", defaults.seq_len, "tokens per sequence");
  add("sequences", defaults.sequences, "sequences per data-parallel replica and step");
  add("global_sequences", defaults.global_sequences,
      "sequences per step over all data-parallel replicas (the global batch)");
  add("vocab", defaults.vocab, "a language model's vocabulary (token ids of its dataset)");
}

}  // namespace meshslice
