#pragma once
// The model's shape as every app's deck spells it, each key with one meaning:
//   model.hidden            hidden size H (heads x head size)
//   model.heads             attention heads
//   model.blocks            transformer blocks L
//   model.seq_len           tokens per sequence
//   model.vocab             a language model's vocabulary
//   model.sequences         sequences per data-parallel replica and step (meshslice-train: the
//                           deck fixes mesh.dp, so the global batch is mesh.dp x this)
//   model.global_sequences  sequences per step over all replicas (meshslice-tune: it chooses dp)
// An app declares the keys it reads with its defaults; `notes` adds what a key means to that app
// (its limits, what 0 stands for) after the shared meaning.
#include <Teuchos_ParameterList.hpp>

#include <map>
#include <optional>
#include <string>

namespace meshslice {

struct ModelShapeKeys {
  std::optional<int> hidden, heads, blocks, seq_len, sequences, global_sequences, vocab;
};

void add_model_shape_parameters(Teuchos::ParameterList& model, const ModelShapeKeys& defaults,
                                const std::map<std::string, std::string>& notes = {});

}  // namespace meshslice
