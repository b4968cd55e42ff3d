#pragma once
// The MLP activations a block can run (model.mlp), one file each in block/activations/: its
// name, its kind (activation_kinds.hpp: gated, z = act(gate x) * (up x) from FF1's 2F outputs,
// or not, z = act(u) from F; the default width F follows) and its scalar function and
// derivative. The model's kernels and serial reference, the emulator's work counts and the deck
// read them from this table; a new activation is a file there and a line in each of the three
// lists below.
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "block/activations/geglu.hpp"
#include "block/activations/gelu.hpp"
#include "block/activations/relu2.hpp"
#include "block/activations/swiglu.hpp"

namespace meshslice {

// An activation's place in MlpActivations.
enum class MlpKind { gelu = 0, swiglu = 1, geglu = 2, relu2 = 3 };
using MlpActivations =
    std::tuple<GeluActivation, SwigluActivation, GegluActivation, Relu2Activation>;

// f(MlpActivation{}) with the activation `mlp` names: its static members and formulas as a type.
template <class F, std::size_t I = 0>
decltype(auto) with_mlp_activation(MlpKind mlp, F&& f) {
  using MlpActivation = std::tuple_element_t<I, MlpActivations>;
  if constexpr (I + 1 == std::tuple_size_v<MlpActivations>) {
    return f(MlpActivation{});
  } else {
    if (static_cast<std::size_t>(mlp) == I) return f(MlpActivation{});
    return with_mlp_activation<F, I + 1>(mlp, std::forward<F>(f));
  }
}

// The label of an activation's backward kernel: its name and "_backward" ("swiglu_backward").
template <class MlpActivation>
const char* backward_label() {
  static const std::string label = std::string(MlpActivation::name) + "_backward";
  return label.c_str();
}

std::vector<MlpKind> mlp_kinds();      // every one, in the table's order
const char* mlp_name(MlpKind mlp);     // "gelu", "swiglu", ...
const char* mlp_meaning(MlpKind mlp);  // what it computes, for the deck's documentation
bool mlp_gated(MlpKind mlp);
// F when the deck does not set it: 4H for GeLU and ReLU^2, 8H/3 rounded up to a multiple of 256
// for the gated ones (block/activations/activation_kinds.hpp).
std::size_t default_ffn(std::size_t hidden, MlpKind mlp);
std::string mlp_names();  // "gelu, swiglu, geglu or relu2"
// The activation named `name`; anything else is a UserError naming `key` and the names.
MlpKind parse_mlp(const std::string& name, const std::string& key);

}  // namespace meshslice
