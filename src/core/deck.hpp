#pragma once
// Input decks: Teuchos ParameterLists read from YAML (or XML), checked against the list of valid
// parameters that each app builds with defaults and doc strings.
//
// Deck form (YAML): a plain top-level map, no wrapper key, e.g.
//
//     repetitions: 5
//     mesh:
//       rows: 2
//       cols: 4
//     sizes: [1024, 2048]
//
// Teuchos 13.2 itself insists on exactly one top-level key that names the list (`ANONYMOUS:`) and
// silently drops top-level scalars next to it, so load_deck nests the file's text under a wrapper
// key before parsing. The Teuchos form (`%YAML 1.1`, `---`, `ANONYMOUS:` + indented map, `...`),
// which Teuchos::writeParameterListToYamlFile produces, is accepted too: a sole top-level
// `ANONYMOUS` sublist is unwrapped. Teuchos YAML cannot express an empty array (`[]`); use the
// default or --set key=.
//
// Typical app flow (done by run_app in core/app.hpp):
//     ParameterList deck = load_deck(path);
//     for (auto& o : overrides) apply_override(deck, valid, o);
//     validate_and_fill(deck, valid);
//     write_deck_yaml(out_dir + "/deck.yaml", deck);
#include <Teuchos_ParameterList.hpp>

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace meshslice {

// Reads a deck file: XML when the name ends in .xml, YAML otherwise. A missing or unreadable
// file or a parse error is a UserError naming the file and the parser's message.
Teuchos::ParameterList load_deck(const std::string& path);

// Parses YAML deck text (the form described above); `source` names it in error messages.
Teuchos::ParameterList parse_deck_yaml(const std::string& text, const std::string& source);

// Declares a string parameter whose value must be one of `choices` (checked by validate_and_fill
// and apply_override, listed by print_help).
void set_choice(Teuchos::ParameterList& valid, const std::string& name,
                const std::string& default_value, const std::vector<std::string>& choices,
                const std::string& doc);

// Checks the user's deck against `valid` recursively (unknown keys, sublist/value mix-ups, types,
// choices; an int where a double is expected is converted) and fills in every missing key with
// its default. Afterwards the deck has exactly the keys, order and types of `valid`.
void validate_and_fill(Teuchos::ParameterList& deck, const Teuchos::ParameterList& valid);

// Applies one command-line override `key.sub=value`, parsing the value by the type of the valid
// entry: int, double, bool (true/false/1/0/yes/no/on/off), string, arrays as `1,2,4` or `[1,2,4]`.
void apply_override(Teuchos::ParameterList& deck, const Teuchos::ParameterList& valid,
                    const std::string& assignment);

// Usage line, summary, then one aligned row per key: dotted name, type, default, doc and choices.
// A non-empty `default_deck` makes the deck argument optional in the usage line.
void print_help(std::ostream& out, const std::string& app, const std::string& summary,
                const Teuchos::ParameterList& valid, const std::string& default_deck = "");

// The (resolved) deck as a plain YAML deck that load_deck reads back to the same values and
// types; `comment` (e.g. where the deck came from) goes into its header as # lines.
std::string deck_yaml_text(const Teuchos::ParameterList& deck, const std::string& comment = "");
// The same, written to `path` as an output file (core/output_file.hpp: atomically; a path that
// cannot be written is a RankLocalError).
void write_deck_yaml(const std::string& path, const Teuchos::ParameterList& deck,
                     const std::string& comment = "");

// "int", "double", "bool", "string", "int array", "double array", "string array", "sublist".
std::string entry_type_name(const Teuchos::ParameterEntry& entry);

// The entry at a dotted key ("mesh.rows"), or null when the deck has none (a user's deck before
// validation may lack any key).
const Teuchos::ParameterEntry* find_entry_if_any(const Teuchos::ParameterList& deck,
                                                 const std::string& dotted_key);
// The same for a validated deck: asking for a key the app did not declare is a bug in the app,
// hence std::logic_error rather than UserError.
const Teuchos::ParameterEntry& find_entry(const Teuchos::ParameterList& deck,
                                          const std::string& dotted_key);

// Typed read of a validated deck: get_param<int>(deck, "mesh.rows"). (Not named `get`: for a
// non-const ParameterList, argument-dependent lookup would pick Teuchos::get<T>(list, name),
// which does not understand dotted keys.)
template <class T>
T get_param(const Teuchos::ParameterList& deck, const std::string& dotted_key) {
  const Teuchos::ParameterEntry& entry = find_entry(deck, dotted_key);
  if (!entry.isType<T>()) {
    throw std::logic_error(concat("deck key '", dotted_key, "' holds ", entry_type_name(entry),
                                  ", not the type the program asked for"));
  }
  return Teuchos::getValue<T>(entry);
}

template <class T>
std::vector<T> get_array(const Teuchos::ParameterList& deck, const std::string& dotted_key) {
  const Teuchos::Array<T> values = get_param<Teuchos::Array<T>>(deck, dotted_key);
  return std::vector<T>(values.begin(), values.end());
}

inline std::vector<int> get_ints(const Teuchos::ParameterList& deck, const std::string& key) {
  return get_array<int>(deck, key);
}
inline std::vector<double> get_doubles(const Teuchos::ParameterList& deck, const std::string& key) {
  return get_array<double>(deck, key);
}
inline std::vector<std::string> get_strings(const Teuchos::ParameterList& deck,
                                            const std::string& key) {
  return get_array<std::string>(deck, key);
}

}  // namespace meshslice
