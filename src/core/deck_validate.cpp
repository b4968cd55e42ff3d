// Checking a user's deck against the app's valid parameters, and --set overrides. Every message
// names the full dotted key and says what would have been accepted, because the user fixes the
// deck from the message alone.
#include <Teuchos_ParameterEntryValidator.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "core/deck.hpp"
#include "core/deck_internal.hpp"

namespace meshslice {

using namespace deck_detail;

namespace {

// A string key's allowed values. Teuchos::StringValidator would do, but its header
// (Teuchos_StandardParameterEntryValidators.hpp) does not parse as C++20 in Trilinos 13.2 (a
// constructor declared with template arguments, an error from g++ 11 on), and meshslice builds
// as C++20 against Kokkos 5 with such a Teuchos. check_allowed() gives the user's message; this
// only carries the list (choices_of() reads it back through validStringValues()).
class ChoiceValidator : public Teuchos::ParameterEntryValidator {
 public:
  explicit ChoiceValidator(const std::vector<std::string>& choices)
      : choices_(Teuchos::rcp(new Teuchos::Array<std::string>(choices.begin(), choices.end()))) {}

  const std::string getXMLTypeName() const override { return "meshslice_choice"; }
  void printDoc(const std::string& doc, std::ostream& out) const override {
    out << "# " << doc << "\n# one of: " << join(choices_->toVector()) << "\n";
  }
  ValidStringsList validStringValues() const override { return choices_; }
  void validate(const Teuchos::ParameterEntry& entry, const std::string& name,
                const std::string& sublist) const override {
    const bool allowed = entry.isType<std::string>() &&
                         std::find(choices_->begin(), choices_->end(),
                                   Teuchos::getValue<std::string>(entry)) != choices_->end();
    if (!allowed)
      throw std::invalid_argument(
          concat("'", sublist, name, "' takes one of: ", join(choices_->toVector())));
  }

 private:
  Teuchos::RCP<const Teuchos::Array<std::string>> choices_;
};

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// "deck key 'mesh.rowz' is unknown; valid keys in 'mesh': cols, dp, pp, rows (see --help).
//  Did you mean 'mesh.rows'?"
UserError unknown_key(const std::string& prefix, const std::string& name,
                      const Teuchos::ParameterList& valid) {
  const std::vector<std::string> keys = sorted_keys(valid);
  std::string message = concat("deck key '", join_key(prefix, name), "' is unknown; ");
  if (keys.empty()) {
    message += concat("'", prefix, "' takes no keys");
  } else {
    message += prefix.empty() ? std::string("valid top-level keys: ")
                              : concat("valid keys in '", prefix, "': ");
    message += join(keys) + " (see --help)";
  }
  std::string closest;
  std::size_t best = 3;  // suggest only near misses (typos), not arbitrary keys
  for (const auto& key : keys) {
    const std::size_t d = edit_distance(name, key);
    if (d < best && d < key.size()) best = d, closest = key;
  }
  if (!closest.empty()) message += concat(". Did you mean '", join_key(prefix, closest), "'?");
  return UserError(message);
}

std::string describe_given(const Teuchos::ParameterEntry& given) {
  if (given.isList()) {
    return Teuchos::getValue<Teuchos::ParameterList>(given).numParams() == 0
               ? "nothing (the key has no value)"
               : "a sublist";
  }
  const std::string text = value_text(given);
  return concat(entry_type_name(given), " ", given.isType<std::string>() ? "'" + text + "'" : text);
}

// Teuchos' YAML reader (13.2) reads no control character but tab, no byte >= 0x7f (so no UTF-8)
// and takes '#' for a comment even in quotes. A string holding one (only --set can give it) would
// make a deck.yaml that cannot be read back, so it is refused here, as a deck would refuse it.
void check_deck_characters(const Teuchos::ParameterEntry& value, const std::string& key) {
  std::vector<std::string> strings;
  if (value.isType<std::string>()) strings.push_back(Teuchos::getValue<std::string>(value));
  if (value.isType<Teuchos::Array<std::string>>()) {
    for (const auto& s : Teuchos::getValue<Teuchos::Array<std::string>>(value))
      strings.push_back(s);
  }
  for (const std::string& s : strings) {
    for (const char c : s) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte == '#' || byte >= 0x7f || (byte < 0x20 && byte != '\t' && byte != '\n')) {
        throw UserError(concat("deck key '", key, "' holds the character ",
                               byte == '#' ? std::string("'#'") : concat("of code ", int(byte)),
                               "; deck strings hold printable ASCII characters other than '#'"));
      }
    }
  }
}

void check_allowed(const Teuchos::ParameterEntry& value, const Teuchos::ParameterEntry& valid,
                   const std::string& key) {
  check_deck_characters(value, key);
  const std::vector<std::string> choices = choices_of(valid);
  if (!choices.empty() && value.isType<std::string>()) {
    const auto& s = Teuchos::getValue<std::string>(value);
    if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
      throw UserError(concat("deck key '", key, "' is '", s, "'; choose one of: ", join(choices)));
    }
    return;
  }
  // Any other Teuchos validator an app attached (e.g. a number range) has the final word.
  if (!valid.validator().is_null()) {
    try {
      valid.validator()->validate(value, key, "");
    } catch (const std::exception& e) {
      throw UserError(concat("deck key '", key, "' has a value that is not allowed: ", e.what()));
    }
  }
}

template <class To, class From>
Teuchos::Array<To> convert_array(const Teuchos::Array<From>& from) {
  return Teuchos::Array<To>(from.begin(), from.end());
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_bool(const std::string& text, bool& out) {
  const std::string s = lowercase(text);
  const bool is_true = s == "true" || s == "1" || s == "yes" || s == "on";
  const bool is_false = s == "false" || s == "0" || s == "no" || s == "off";
  if (is_true || is_false) out = is_true;
  return is_true || is_false;
}

bool parse_value(const std::string& text, const Teuchos::ParameterEntry& valid,
                 Teuchos::ParameterEntry& out);  // defined below, with the --set parsers

// A scalar's value as text ("" for anything else), to read it the way --set reads a value.
std::string scalar_text(const Teuchos::ParameterEntry& given) {
  if (given.isType<int>()) return std::to_string(Teuchos::getValue<int>(given));
  if (given.isType<std::string>()) return Teuchos::getValue<std::string>(given);
  if (given.isType<double>()) {
    std::ostringstream text;
    text.precision(17);
    text << Teuchos::getValue<double>(given);
    return text.str();
  }
  return "";
}

// The user's value converted to the valid entry's type, or a UserError saying what was expected.
Teuchos::ParameterEntry checked_value(const Teuchos::ParameterEntry& given,
                                      const Teuchos::ParameterEntry& valid,
                                      const std::string& key) {
  Teuchos::ParameterEntry value = given;
  bool bool_word = false;
  if (given.getAny(false).type() == valid.getAny(false).type() && !given.isList()) {
    // same type: nothing to convert
  } else if (valid.isType<double>() && given.isType<int>()) {
    value = Teuchos::ParameterEntry(static_cast<double>(Teuchos::getValue<int>(given)));
  } else if (valid.isType<Teuchos::Array<double>>() && given.isType<Teuchos::Array<int>>()) {
    value = Teuchos::ParameterEntry(
        convert_array<double>(Teuchos::getValue<Teuchos::Array<int>>(given)));
  } else if (valid.isArray() && !given.isArray() && !given.isList() &&
             !scalar_text(given).empty() && parse_value(scalar_text(given), valid, value)) {
    // A scalar where an array is expected reads as --set reads it (4 is [4], "1,2" is [1, 2]),
    // so a deck and the command line accept the same values.
  } else if (valid.isType<bool>() && given.isType<std::string>() &&
             parse_bool(Teuchos::getValue<std::string>(given), bool_word)) {
    value = Teuchos::ParameterEntry(bool_word);  // YAML readers differ on yes/no/on/off
  } else {
    std::string hint;
    if (valid.isType<std::string>() && !given.isList())
      hint = " (put it in quotes to make it a string)";
    if (valid.isArray()) hint = " (write an array as [a, b, c])";
    throw UserError(concat("deck key '", key, "' expects ", entry_type_name(valid), ", but ",
                           describe_given(given), " was given", hint));
  }
  check_allowed(value, valid, key);
  return value;
}

// Resolves `given` against `valid`: the result has valid's keys in valid's order.
Teuchos::ParameterList resolve(const Teuchos::ParameterList& given,
                               const Teuchos::ParameterList& valid, const std::string& prefix) {
  for (auto it = given.begin(); it != given.end(); ++it) {
    if (!valid.isParameter(given.name(it))) throw unknown_key(prefix, given.name(it), valid);
  }
  Teuchos::ParameterList resolved(given.name());
  const Teuchos::ParameterList no_keys;
  for (auto it = valid.begin(); it != valid.end(); ++it) {
    const std::string& name = valid.name(it);
    const std::string key = join_key(prefix, name);
    const Teuchos::ParameterEntry& valid_entry = valid.entry(it);
    const Teuchos::ParameterEntry* given_entry = given.getEntryPtr(name);
    if (valid_entry.isList()) {
      if (given_entry != nullptr && !given_entry->isList()) {
        throw UserError(
            concat("deck key '", key, "' must be a sublist with keys ",
                   join(sorted_keys(Teuchos::getValue<Teuchos::ParameterList>(valid_entry))),
                   ", but ", describe_given(*given_entry), " was given"));
      }
      const auto& sub_given =
          given_entry ? Teuchos::getValue<Teuchos::ParameterList>(*given_entry) : no_keys;
      resolved.sublist(name, false, valid_entry.docString()) =
          resolve(sub_given, Teuchos::getValue<Teuchos::ParameterList>(valid_entry), key);
    } else if (given_entry != nullptr) {
      resolved.setEntry(name, checked_value(*given_entry, valid_entry, key));
    } else {
      resolved.setEntry(name, valid_entry);
    }
  }
  return resolved;
}

// --- parsing --set values -------------------------------------------------------------------

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool parse_int(const std::string& text, int& out) {
  const std::string s = trimmed(text);
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || value < INT_MIN || value > INT_MAX) return false;
  out = static_cast<int>(value);
  return true;
}

bool parse_double(const std::string& text, double& out) {
  const std::string s = trimmed(text);
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0' && errno != ERANGE && std::isfinite(out);  // a deck cannot hold inf or nan
}

bool parse_nonempty_string(const std::string& text, std::string& out) {
  out = text;
  return !text.empty();
}

// "1,2,4" or "[1, 2, 4]"; "" and "[]" are the empty array.
template <class T, class Parse>
bool parse_array(const std::string& text, Teuchos::Array<T>& out, Parse parse_element) {
  std::string s = trimmed(text);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = trimmed(s.substr(1, s.size() - 2));
  out.clear();
  if (s.empty()) return true;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    T element{};
    if (!parse_element(trimmed(s.substr(start, comma - start)), element)) return false;
    out.push_back(element);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

template <class T, class Parse>
bool parse_into(const std::string& text, Teuchos::ParameterEntry& out, Parse parse) {
  T value{};
  if (!parse(text, value)) return false;
  out = Teuchos::ParameterEntry(value);
  return true;
}

template <class T, class ParseElement>
bool parse_array_into(const std::string& text, Teuchos::ParameterEntry& out,
                      ParseElement parse_element) {
  const auto parse = [&](const std::string& s, Teuchos::Array<T>& v) {
    return parse_array(s, v, parse_element);
  };
  return parse_into<Teuchos::Array<T>>(text, out, parse);
}

// Parses `text` as the type of `valid` into `out`; false when it cannot be read as that type.
bool parse_value(const std::string& text, const Teuchos::ParameterEntry& valid,
                 Teuchos::ParameterEntry& out) {
  const auto parse_bool_word = [](const std::string& s, bool& v) {
    return parse_bool(trimmed(s), v);
  };
  const auto keep_string = [](const std::string& s, std::string& v) {
    v = s;
    return true;
  };
  if (valid.isType<int>()) return parse_into<int>(text, out, parse_int);
  if (valid.isType<double>()) return parse_into<double>(text, out, parse_double);
  if (valid.isType<bool>()) return parse_into<bool>(text, out, parse_bool_word);
  if (valid.isType<std::string>()) return parse_into<std::string>(text, out, keep_string);
  if (valid.isType<Teuchos::Array<int>>()) return parse_array_into<int>(text, out, parse_int);
  if (valid.isType<Teuchos::Array<double>>()) {
    return parse_array_into<double>(text, out, parse_double);
  }
  if (valid.isType<Teuchos::Array<std::string>>()) {
    return parse_array_into<std::string>(text, out, parse_nonempty_string);
  }
  return false;
}

std::string example_of(const Teuchos::ParameterEntry& valid) {
  if (valid.isType<bool>()) return " (true/false/1/0/yes/no/on/off)";
  if (valid.isArray()) return " (e.g. 1,2,4 or [1,2,4])";
  return "";
}

}  // namespace

void set_choice(Teuchos::ParameterList& valid, const std::string& name,
                const std::string& default_value, const std::vector<std::string>& choices,
                const std::string& doc) {
  if (std::find(choices.begin(), choices.end(), default_value) == choices.end()) {
    throw std::invalid_argument(concat("default '", default_value, "' of '", name,
                                       "' is not among its choices ", join(choices)));
  }
  valid.set(name, default_value, doc, Teuchos::rcp(new ChoiceValidator(choices)));
}

void validate_and_fill(Teuchos::ParameterList& deck, const Teuchos::ParameterList& valid) {
  Teuchos::ParameterList resolved = resolve(deck, valid, "");
  resolved.setName(deck.name());
  deck = resolved;
}

void apply_override(Teuchos::ParameterList& deck, const Teuchos::ParameterList& valid,
                    const std::string& assignment) {
  const auto equals = assignment.find('=');
  const std::string key = trimmed(assignment.substr(0, equals));
  if (equals == std::string::npos || key.empty()) {
    throw UserError(concat("--set '", assignment, "' must look like key.sub=value"));
  }
  const std::string text = assignment.substr(equals + 1);
  const std::string context = concat("--set ", assignment, ": ");

  // Walk the valid list and the deck side by side, creating deck sublists as needed.
  const Teuchos::ParameterList* valid_list = &valid;
  Teuchos::ParameterList* deck_list = &deck;
  std::string prefix;
  std::string::size_type start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string name = key.substr(start, dot - start);
    const Teuchos::ParameterEntry* valid_entry = valid_list->getEntryPtr(name);
    if (valid_entry == nullptr) {
      throw UserError(context + unknown_key(prefix, name, *valid_list).what());
    }
    const std::string path = join_key(prefix, name);
    const bool last = dot == std::string::npos;
    if (last && valid_entry->isList()) {
      throw UserError(
          concat(context, "deck key '", path, "' is a sublist; set one of its keys: ",
                 join(sorted_keys(Teuchos::getValue<Teuchos::ParameterList>(*valid_entry))),
                 " (as ", path, ".KEY=value)"));
    }
    if (last) {
      Teuchos::ParameterEntry value;
      if (!parse_value(text, *valid_entry, value)) {
        throw UserError(concat(context, "deck key '", path, "' expects ",
                               entry_type_name(*valid_entry), example_of(*valid_entry),
                               ", cannot read '", text, "'"));
      }
      try {
        check_allowed(value, *valid_entry, path);
      } catch (const UserError& e) {
        throw UserError(context + e.what());
      }
      deck_list->setEntry(name, value);
      return;
    }
    if (!valid_entry->isList()) {
      throw UserError(concat(context, "deck key '", path, "' holds ", entry_type_name(*valid_entry),
                             ", not a sublist, so '", key, "' does not exist"));
    }
    if (deck_list->isParameter(name) && !deck_list->isSublist(name)) {
      throw UserError(concat(context, "deck key '", path,
                             "' must be a sublist, but the deck gives ",
                             describe_given(deck_list->getEntry(name))));
    }
    valid_list = &valid_list->sublist(name);
    deck_list = &deck_list->sublist(name);
    prefix = path;
    start = dot + 1;
  }
}

}  // namespace meshslice
