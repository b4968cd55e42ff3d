#include "parameters/optimizers/optimizer_table.hpp"

#include <algorithm>
#include <cstring>

#include "core/errors.hpp"

namespace meshslice {

namespace {

template <std::size_t... I>
std::vector<const OptimizerInfo*> infos(std::index_sequence<I...>) {
  return {&std::tuple_element_t<I, OptimizerTable>::info()...};
}

const std::vector<const OptimizerInfo*>& table() {
  static const std::vector<const OptimizerInfo*> t = infos(std::make_index_sequence<kOptimizers>{});
  return t;
}

bool same_range(const OptimizerKey& a, const OptimizerKey& b) {
  return a.default_value == b.default_value && a.min == b.min && a.below == b.below;
}

// Every optimizer's keys merged by name: where several read a key, its doc names each, e.g.
// "adamw: the first moment's decay; lion: the momentum's share of the update's direction", or
// "adamw, lion: ..." where they say the same.
struct MergedKey {
  OptimizerKey key;
  std::vector<std::string> docs, readers;  // readers[i]: the optimizers that say docs[i]
};

const std::vector<MergedKey>& merged_keys() {
  static const std::vector<MergedKey> merged = [] {
    std::vector<MergedKey> out;
    for (const OptimizerInfo* info : table())
      for (const OptimizerKey& k : info->keys) {
        auto same = std::find_if(out.begin(), out.end(), [&](const MergedKey& m) {
          return std::strcmp(m.key.key, k.key) == 0;
        });
        if (same == out.end()) same = out.insert(out.end(), MergedKey{k, {}, {}});
        MESHSLICE_ASSERT(same_range(same->key, k), "optimizer key ", k.key,
                         " has another default or range in ", info->name,
                         " than in an optimizer before it; optimizers share a key's default");
        const auto said = std::find(same->docs.begin(), same->docs.end(), k.doc);
        if (said == same->docs.end()) {
          same->docs.emplace_back(k.doc);
          same->readers.emplace_back(info->name);
        } else {
          same->readers[static_cast<std::size_t>(said - same->docs.begin())] +=
              concat(", ", info->name);
        }
      }
    for (MergedKey& m : out) {
      m.key.doc.clear();
      for (std::size_t i = 0; i < m.docs.size(); ++i)
        m.key.doc += concat(i ? "; " : "", m.readers[i], ": ", m.docs[i]);
    }
    return out;
  }();
  return merged;
}

const OptimizerKey& known_key(const std::string& key) {
  for (const MergedKey& m : merged_keys())
    if (key == m.key.key) return m.key;
  throw InternalError(concat("no optimizer of the table has a key '", key, "'"));
}

}  // namespace

const OptimizerInfo& optimizer_info(OptimizerKind kind) {
  MESHSLICE_ASSERT(kind.index < kOptimizers, "optimizer ", kind.index, " is not in the table");
  return *table()[kind.index];
}

const char* optimizer_name(OptimizerKind kind) { return optimizer_info(kind).name; }

const std::vector<std::string>& optimizer_state_names(OptimizerKind kind) {
  return optimizer_info(kind).states;
}

bool optimizer_factors(OptimizerKind kind, std::size_t rows, std::size_t cols) {
  return !optimizer_info(kind).factored_states.empty() && rows > 1 && cols > 1;
}

std::vector<OptimizerState> optimizer_states(OptimizerKind kind, std::size_t rows,
                                             std::size_t cols) {
  const OptimizerInfo& info = optimizer_info(kind);
  if (optimizer_factors(kind, rows, cols))
    return {{info.factored_states.at(0), rows, 1, false},
            {info.factored_states.at(1), 1, cols, false}};
  std::vector<OptimizerState> out;
  for (const std::string& suffix : info.states) out.push_back({suffix, rows, cols, true});
  return out;
}

double optimizer_states_per_weight(OptimizerKind kind) {
  const OptimizerInfo& info = optimizer_info(kind);
  return info.factored_states.empty() ? static_cast<double>(info.states.size()) : 0.0;
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const OptimizerInfo* info : table()) names.emplace_back(info->name);
  return names;
}

OptimizerKind parse_optimizer(const std::string& name) {
  for (std::size_t i = 0; i < kOptimizers; ++i)
    if (name == table()[i]->name) return OptimizerKind{i};
  std::string valid;
  for (const std::string& n : optimizer_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw UserError(concat("unknown optimizer '", name, "'; valid optimizers: ", valid));
}

std::vector<OptimizerKey> optimizer_deck_keys() {
  std::vector<OptimizerKey> keys;
  for (const MergedKey& m : merged_keys()) keys.push_back(m.key);
  return keys;
}

double OptimizerSettings::value(const std::string& key) const {
  const auto set = values.find(key);
  return set != values.end() ? set->second : known_key(key).default_value;
}

OptimizerSettings& OptimizerSettings::set(const std::string& key, double v) {
  known_key(key);
  values[key] = v;
  return *this;
}

}  // namespace meshslice
