#pragma once
// A meshslice language model as Hugging Face transformers' Llama (LlamaForCausalLM): its
// config.json and its tensors under transformers' names and orientation. transformers' Linear
// keeps W as out x in (y = x W^T), meshslice's y = x W keeps in x out, so every projection is
// transposed; QKV's [q | k | v] columns become q_proj, k_proj and v_proj, SwiGLU's FF1
// [gate | up] gate_proj and up_proj. Llama's block is meshslice's with a SwiGLU MLP and RoPE:
// RMSNorm with a gain, RoPE pairing dimension d with d + dim/2 at base 10000, no biases.
//
//     require(llama_incompatibility(shape).empty(), ...);
//     for (const ExportedTensor& t : llama_tensors(shape)) ...   // from the checkpoint's
//     json::Value config = llama_config(shape, "float32");
#include <cstddef>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "model/model_config.hpp"

namespace meshslice::exportapp {

// Why Llama cannot express the model (a sentence naming the deck key), or "" when it can.
std::string llama_incompatibility(const ModelShape& shape);

// One tensor of the export: columns [col0, col0 + cols) of the checkpoint's tensor `source`,
// transposed (a projection) or not (the embedding table, a gain, flattened to a vector).
struct ExportedTensor {
  std::string name;    // transformers' ("model.layers.0.self_attn.q_proj.weight")
  std::string source;  // the checkpoint's ("blocks.0.qkv.weight")
  std::size_t col0 = 0, cols = 0;
  bool transposed = false;
  bool vector = false;  // a gain: shape [H]
};
std::vector<ExportedTensor> llama_tensors(const ModelShape& shape);

// config.json for LlamaForCausalLM; torch_dtype "float32", "float64" or "bfloat16".
json::Value llama_config(const ModelShape& shape, const std::string& torch_dtype);

}  // namespace meshslice::exportapp
