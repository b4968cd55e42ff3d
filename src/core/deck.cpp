// Reading and writing decks, typed access, and the small formatting helpers the other deck
// files share. Validation lives in deck_validate.cpp, help text in deck_help.cpp.
#include "core/deck.hpp"

#include <Teuchos_XMLParameterListCoreHelpers.hpp>
#include <Teuchos_YamlParameterListCoreHelpers.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <regex>
#include <sstream>

#include "core/deck_internal.hpp"
#include "core/output_file.hpp"

namespace meshslice {

namespace deck_detail {

std::string join_key(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::vector<std::string> sorted_keys(const Teuchos::ParameterList& list) {
  std::vector<std::string> keys;
  for (auto it = list.begin(); it != list.end(); ++it) keys.push_back(list.name(it));
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

namespace {

// Shortest text that reads back as the same double and still looks like a double to the YAML
// parser (which would otherwise type "2" as an int).
std::string double_text(double value) {
  std::string text;
  for (int precision = 15; precision <= 17; ++precision) {
    std::ostringstream os;
    os << std::setprecision(precision) << value;
    text = os.str();
    if (std::strtod(text.c_str(), nullptr) == value) break;
  }
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // n: inf, nan
  return text;
}

template <class T>
std::string element_text(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}
std::string element_text(const double& value) { return double_text(value); }

template <class T>
std::string array_text(const Teuchos::ParameterEntry& entry) {
  std::vector<std::string> parts;
  for (const T& v : Teuchos::getValue<Teuchos::Array<T>>(entry)) parts.push_back(element_text(v));
  return "[" + join(parts) + "]";
}

}  // namespace

std::string value_text(const Teuchos::ParameterEntry& entry) {
  if (entry.isType<int>()) return element_text(Teuchos::getValue<int>(entry));
  if (entry.isType<double>()) return double_text(Teuchos::getValue<double>(entry));
  if (entry.isType<bool>()) return Teuchos::getValue<bool>(entry) ? "true" : "false";
  if (entry.isType<std::string>()) return Teuchos::getValue<std::string>(entry);
  if (entry.isType<Teuchos::Array<int>>()) return array_text<int>(entry);
  if (entry.isType<Teuchos::Array<double>>()) return array_text<double>(entry);
  if (entry.isType<Teuchos::Array<std::string>>()) return array_text<std::string>(entry);
  if (entry.isList()) return "{...}";
  std::ostringstream os;
  os << entry.getAny(false);
  return os.str();
}

std::vector<std::string> choices_of(const Teuchos::ParameterEntry& valid_entry) {
  const auto validator = valid_entry.validator();
  if (validator.is_null()) return {};
  const auto strings = validator->validStringValues();
  if (strings.is_null()) return {};
  return std::vector<std::string>(strings->begin(), strings->end());
}

}  // namespace deck_detail

using namespace deck_detail;

namespace {

// Key under which load_deck nests the user's top-level map (see deck.hpp for why).
const char* const kWrapperKey = "meshslice_deck";
// The name Teuchos gives the top-level list when it writes YAML.
const char* const kTeuchosTopLevel = "ANONYMOUS";

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// Teuchos exceptions start with the throwing file, line and test expression; the user only
// needs the message that follows them.
std::string teuchos_message(const std::string& what) {
  std::string message = what;
  const auto test = message.find("Throw test that evaluated to true:");
  if (test != std::string::npos) {
    const auto body = message.find("\n\n", test);
    if (body != std::string::npos) message = message.substr(body + 2);
  }
  if (message.rfind("error: ", 0) == 0) message = message.substr(7);
  return trimmed(message);
}

// The parser's name for a token, in words.
std::string token_words(const std::string& token) {
  static const std::pair<const char*, const char*> words[] = {
      {"NEWLINE", "a line break"},
      {"INDENT", "more indentation"},
      {"DEDENT", "less indentation"},
      {"OTHERCHAR", "a plain character"},
      {"EOF", "the end of the file"},
      {"WHITESPACE", "a blank"},
      {"WORD", "a word"},
      {"'", "a quote"},
      {"\"", "a double quote"},
  };
  for (const auto& [name, text] : words)
    if (token == name) return text;
  return token.size() > 1 && token.front() == '\'' ? token : concat("'", token, "'");
}

// Teuchos' YAML parser reports
//     Parser failure at line L column C [of parseYamlStream]
//     <the line>
//     <a caret under the column>
//     Expected one of {<tokens>}
//     Got: <token>
//     Lexer text: "..."
//     Parser was in state N
// about the wrapped text (one line on top, two spaces of indent). This becomes
//     SOURCE:L:C: invalid YAML: expected <token> or <token> but found <token>
//       L | <the line as the user wrote it>
// with the user's line and column; a message of another shape is passed on as it is.
std::string yaml_error(const std::string& source, const std::string& message) {
  static const std::regex position(R"(line (\d+),? column (\d+)( of parseYamlStream)?)");
  std::smatch match;
  if (!std::regex_search(message, match, position))
    return concat("cannot parse deck '", source, "': ", message);
  const int line = std::max(1, std::stoi(match[1]) - 1);
  const int column = std::max(1, std::stoi(match[2]) - 2);
  std::string expected, got, quoted;
  std::istringstream rest(match.suffix().str());
  std::string text_line;
  std::getline(rest, text_line);  // the end of the position line
  while (std::getline(rest, text_line)) {
    if (text_line.rfind("Expected one of {", 0) == 0) {
      expected = text_line.substr(17, text_line.size() - 18);
    } else if (text_line.rfind("Got: ", 0) == 0) {
      got = token_words(trimmed(text_line.substr(5)));
    } else if (text_line.rfind("Lexer text:", 0) == 0 || text_line.rfind("Parser was in", 0) == 0) {
      continue;
    } else if (quoted.empty() && expected.empty() && !text_line.empty()) {
      // The offending line, indented by the wrapper. (Its caret line is dropped: the parser
      // places it a column or two off.)
      const auto indent = std::min<std::size_t>(2, text_line.find_first_not_of(' '));
      quoted = concat("\n  ", line, " | ", text_line.substr(std::min(indent, text_line.size())));
    }
  }
  std::string what = "invalid YAML";
  if (!expected.empty()) {
    std::string tokens;  // the list is "a, b, c"; a token may itself be ',' (quoted)
    for (std::size_t at = 0; at < expected.size();) {
      std::size_t end = expected.find(", ", at);
      if (end == std::string::npos) end = expected.size();
      tokens += (tokens.empty() ? "" : " or ") + token_words(expected.substr(at, end - at));
      at = end + 2;
    }
    what += ": expected " + tokens;
  }
  if (!got.empty()) what += " but found " + got;
  return concat(source, ":", line, ":", column, ": ", what, quoted);
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  require(!std::filesystem::exists(path, ec) || std::filesystem::is_regular_file(path, ec),
          "deck '", path,
          "' is not a regular file (a directory?); give the path of a .yaml or "
          ".xml deck");
  std::ifstream in(path, std::ios::binary);
  require(in.good(), "cannot open deck file '", path, "'");
  std::ostringstream text;
  text << in.rdbuf();
  require(!in.bad(), "cannot read deck file '", path, "'");
  return text.str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Teuchos::ParameterList parse_deck_yaml(const std::string& text, const std::string& source) {
  // Nest everything under the wrapper key. Directives and document markers must stay at column
  // 0, so they become blank lines, which keeps the line numbers of parse errors predictable.
  std::ostringstream nested;
  nested << kWrapperKey << ":\n";
  bool has_content = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string content = trimmed(line);
    const bool marker = line.rfind("%", 0) == 0 || content == "---" || content == "...";
    if (marker) {
      nested << "\n";
      continue;
    }
    if (!content.empty() && content[0] != '#') has_content = true;
    nested << (line.empty() ? "" : "  ") << line << "\n";
  }
  if (!has_content) return Teuchos::ParameterList(kWrapperKey);  // an empty deck: all defaults

  Teuchos::RCP<Teuchos::ParameterList> parsed;
  try {
    parsed = Teuchos::getParametersFromYamlString(nested.str());
  } catch (const std::exception& e) {
    throw UserError(yaml_error(source, teuchos_message(e.what())));
  }
  Teuchos::ParameterList deck = *parsed;
  if (deck.numParams() == 1 && deck.isSublist(kTeuchosTopLevel)) {
    deck = Teuchos::ParameterList(deck.sublist(kTeuchosTopLevel));
  }
  deck.setName(kWrapperKey);
  return deck;
}

Teuchos::ParameterList load_deck(const std::string& path) {
  const std::string text = read_file(path);  // also gives a clean message for a missing file
  if (!ends_with(path, ".xml")) return parse_deck_yaml(text, path);
  try {
    return *Teuchos::getParametersFromXmlString(text);
  } catch (const std::exception& e) {
    throw UserError(concat("cannot parse deck '", path, "': ", teuchos_message(e.what())));
  }
}

namespace {

bool is_bool_word(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}) {
    if (s == word) return true;
  }
  return false;
}

bool looks_like_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != s.c_str();  // a numeric prefix is enough for the parser to read a number
}

// Quotes a string wherever the YAML reader would otherwise change it: numbers, bool words,
// YAML punctuation, surrounding blanks. Inside single quotes only ' itself needs escaping.
std::string yaml_string(const std::string& s) {
  // A leading '.' too: the reader fails on plain ".", ". a" and "...a" (a document end marker).
  const bool plain = !s.empty() && s == trimmed(s) && !looks_like_number(s) && !is_bool_word(s) &&
                     s[0] != '.' &&
                     s.find_first_of(":{}[],&*#?|-<>=!%@\\'\"`") == std::string::npos;
  if (plain) return s;
  std::string quoted = "'";
  for (char c : s) quoted += (c == '\'') ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string yaml_string_array(const Teuchos::Array<std::string>& values) {
  std::vector<std::string> parts;
  for (const std::string& v : values) parts.push_back(yaml_string(v));
  return "[" + join(parts) + "]";
}

void write_list(std::ostream& out, const Teuchos::ParameterList& list, int indent) {
  const std::string pad(indent, ' ');
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string key = yaml_string(list.name(it));
    const Teuchos::ParameterEntry& entry = list.entry(it);
    if (entry.isList()) {
      const auto& sublist = Teuchos::getValue<Teuchos::ParameterList>(entry);
      out << pad << key << ":" << (sublist.numParams() == 0 ? " {}" : "") << "\n";
      write_list(out, sublist, indent + 2);
    } else if (entry.isArray() && value_text(entry) == "[]") {
      // The Teuchos YAML reader cannot type an empty array, so record it as a comment.
      out << pad << "# " << key << ": []  (empty " << entry_type_name(entry) << ")\n";
    } else if (entry.isType<std::string>()) {
      const auto& s = Teuchos::getValue<std::string>(entry);
      if (s.find('\n') == std::string::npos) {
        out << pad << key << ": " << yaml_string(s) << "\n";
      } else {  // literal block; '|' keeps one final line break (the most the reader keeps)
        out << pad << key << ": " << (s.back() == '\n' ? "|" : "|-") << "\n";
        std::istringstream lines(s);
        for (std::string line; std::getline(lines, line);) out << pad << "  " << line << "\n";
      }
    } else if (entry.isType<Teuchos::Array<std::string>>()) {
      const auto& strings = Teuchos::getValue<Teuchos::Array<std::string>>(entry);
      out << pad << key << ": " << yaml_string_array(strings) << "\n";
    } else {
      out << pad << key << ": " << value_text(entry) << "\n";
    }
  }
}

}  // namespace

std::string deck_yaml_text(const Teuchos::ParameterList& deck, const std::string& comment) {
  // Written by hand rather than with Teuchos::writeParameterListToYamlFile so that the file is a
  // plain deck (no ANONYMOUS wrapper), doubles are short yet exact, and strings such as 'on' or
  // '2' stay strings when read back.
  std::ostringstream text;
  std::istringstream comment_lines(comment);
  for (std::string line; std::getline(comment_lines, line);) text << "# " << line << "\n";
  write_list(text, deck, 0);
  return text.str();
}

void write_deck_yaml(const std::string& path, const Teuchos::ParameterList& deck,
                     const std::string& comment) {
  write_output_file(path, deck_yaml_text(deck, comment));
}

std::string entry_type_name(const Teuchos::ParameterEntry& entry) {
  if (entry.isList()) return "sublist";
  if (entry.isType<int>()) return "int";
  if (entry.isType<double>()) return "double";
  if (entry.isType<bool>()) return "bool";
  if (entry.isType<std::string>()) return "string";
  if (entry.isType<Teuchos::Array<int>>()) return "int array";
  if (entry.isType<Teuchos::Array<double>>()) return "double array";
  if (entry.isType<Teuchos::Array<std::string>>()) return "string array";
  return entry.getAny(false).typeName();
}

const Teuchos::ParameterEntry* find_entry_if_any(const Teuchos::ParameterList& deck,
                                                 const std::string& dotted_key) {
  const Teuchos::ParameterList* list = &deck;
  std::string::size_type start = 0;
  for (auto dot = dotted_key.find('.'); dot != std::string::npos;
       start = dot + 1, dot = dotted_key.find('.', start)) {
    const std::string name = dotted_key.substr(start, dot - start);
    if (!list->isSublist(name)) return nullptr;
    list = &list->sublist(name);
  }
  return list->getEntryPtr(dotted_key.substr(start));
}

const Teuchos::ParameterEntry& find_entry(const Teuchos::ParameterList& deck,
                                          const std::string& dotted_key) {
  const Teuchos::ParameterEntry* entry = find_entry_if_any(deck, dotted_key);
  if (entry == nullptr) throw std::logic_error(concat("deck has no key '", dotted_key, "'"));
  return *entry;
}

}  // namespace meshslice
