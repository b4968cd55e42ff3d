#include "block/mlp_activations.hpp"

#include "core/errors.hpp"

namespace meshslice {

std::vector<MlpKind> mlp_kinds() {
  std::vector<MlpKind> kinds;
  for (std::size_t i = 0; i < std::tuple_size_v<MlpActivations>; ++i)
    kinds.push_back(static_cast<MlpKind>(i));
  return kinds;
}

const char* mlp_name(MlpKind mlp) {
  return with_mlp_activation(mlp, [](auto a) { return decltype(a)::name; });
}

const char* mlp_meaning(MlpKind mlp) {
  return with_mlp_activation(mlp, [](auto a) { return decltype(a)::meaning; });
}

bool mlp_gated(MlpKind mlp) {
  return with_mlp_activation(mlp, [](auto a) { return decltype(a)::gated; });
}

std::size_t default_ffn(std::size_t hidden, MlpKind mlp) {
  return with_mlp_activation(mlp, [&](auto a) { return decltype(a)::default_ffn(hidden); });
}

std::string mlp_names() {
  const std::vector<MlpKind> kinds = mlp_kinds();
  std::string names;
  for (std::size_t i = 0; i < kinds.size(); ++i)
    names += concat(i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ", mlp_name(kinds[i]));
  return names;
}

MlpKind parse_mlp(const std::string& name, const std::string& key) {
  for (const MlpKind mlp : mlp_kinds())
    if (name == mlp_name(mlp)) return mlp;
  throw UserError(concat(key, " = '", name, "' is not an MLP; use ", mlp_names()));
}

}  // namespace meshslice
