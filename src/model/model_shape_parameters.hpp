#pragma once
// The model's shape as every app's deck spells it, each key with one meaning:
//   model.hidden            hidden size H (heads x head size)
//   model.heads             attention heads
//   model.kv_heads          key and value heads (grouped-query attention; 0: one per head)
//   model.blocks            transformer blocks L
//   model.seq_len           tokens per sequence
//   model.vocab             a language model's vocabulary
//   model.sequences         sequences per data-parallel replica and step (meshslice-train: the
//                           deck fixes mesh.dp, so the global batch is mesh.dp x this)
//   model.global_sequences  sequences per step over all replicas (meshslice-tune: it chooses dp)
//   model.mlp               the block's MLP: gelu, swiglu, ... (block/mlp_activations.hpp)
//   model.ffn_hidden        the MLP's width F (0: its default)
// An app declares the keys it reads, each with its default and what the key means to that app
// beyond the shared meaning (its limits, what 0 stands for).
#include <Teuchos_ParameterList.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "block/block_fc_layers.hpp"

namespace meshslice {

struct ModelShapeKey {
  std::string name;  // one of the keys above, without "model."
  int default_value = 0;
  std::string note;  // "": the shared meaning says it all
};

// Declares `keys` in `model` (the deck's sublist), in the order given.
void add_model_shape_parameters(Teuchos::ParameterList& model,
                                const std::vector<ModelShapeKey>& keys);

// Declares model.mlp and model.ffn_hidden, the MLP's kind and width, in `model`.
void add_mlp_parameters(Teuchos::ParameterList& model);

// Their values in a validated deck; ffn_hidden 0 stands for the kind's default (default_ffn).
struct MlpChoice {
  MlpKind mlp = MlpKind::gelu;
  std::size_t ffn_hidden = 0;
};
MlpChoice mlp_from(const Teuchos::ParameterList& deck);

}  // namespace meshslice
