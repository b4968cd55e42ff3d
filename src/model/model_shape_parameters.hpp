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
// An app declares the keys it reads, each with its default and what the key means to that app
// beyond the shared meaning (its limits, what 0 stands for).
#include <Teuchos_ParameterList.hpp>

#include <string>
#include <vector>

namespace meshslice {

struct ModelShapeKey {
  std::string name;  // one of the keys above, without "model."
  int default_value = 0;
  std::string note;  // "": the shared meaning says it all
};

// Declares `keys` in `model` (the deck's sublist), in the order given.
void add_model_shape_parameters(Teuchos::ParameterList& model,
                                const std::vector<ModelShapeKey>& keys);

}  // namespace meshslice
