// --help text generated from the valid parameter list, so the documentation of a deck key cannot
// drift from what the app actually accepts.
#include <algorithm>
#include <array>

#include "core/cli.hpp"
#include "core/deck.hpp"
#include "core/deck_internal.hpp"

namespace meshslice {

using namespace deck_detail;

namespace {

struct HelpRow {
  std::array<std::string, 3> columns;  // key, type, default
  std::string doc;
};

void collect_rows(const Teuchos::ParameterList& valid, const std::string& prefix,
                  std::vector<HelpRow>& rows) {
  for (auto it = valid.begin(); it != valid.end(); ++it) {
    const std::string key = join_key(prefix, valid.name(it));
    const Teuchos::ParameterEntry& entry = valid.entry(it);
    if (entry.isList()) {
      rows.push_back({{key, "sublist", ""}, entry.docString()});
      collect_rows(Teuchos::getValue<Teuchos::ParameterList>(entry), key, rows);
      continue;
    }
    std::string shown_default = value_text(entry);
    if (shown_default.empty()) shown_default = "''";
    std::string doc = entry.docString();
    const std::vector<std::string> choices = choices_of(entry);
    if (!choices.empty())
      doc += std::string(doc.empty() ? "" : " ") + "[one of: " + join(choices) + "]";
    rows.push_back({{key, entry_type_name(entry), shown_default}, doc});
  }
}

}  // namespace

void print_help(std::ostream& out, const std::string& app, const std::string& summary,
                const Teuchos::ParameterList& valid, const std::string& default_deck) {
  out << usage_line(app, default_deck.empty()) << "\n";
  if (!summary.empty()) out << "\n" << summary << "\n";
  out << "\nDECK is a YAML (or .xml) Teuchos parameter list; keys left out take their defaults.\n";
  if (!default_deck.empty())
    out << "Without DECK, the deck inputs/" << default_deck << " is used.\n";
  out << "--set overrides one key (arrays as 1,2,4); --out names the output directory (default\n"
         "out), which receives deck.yaml, the resolved deck of the run.\n\n"
         "Kokkos options (to Kokkos::initialize; others under --kokkos- are refused):\n";
  for (const KokkosOption& o : kokkos_options()) {
    const std::string option = std::string(o.name) + o.value;
    out << "  " << option << std::string(option.size() < 36 ? 36 - option.size() : 1, ' ')
        << o.meaning << "\n";
  }
  out << "\nDeck keys:\n";

  std::vector<HelpRow> rows = {{{"KEY", "TYPE", "DEFAULT"}, "DESCRIPTION"}};
  collect_rows(valid, "", rows);
  // Columns fit their widest cell up to a cap, so one long default (a list of names) does not
  // push every description off the screen; a row with an overlong cell continues on a new line.
  const std::array<std::size_t, 3> cap = {36, 12, 20};
  std::array<std::size_t, 3> width{};
  for (const HelpRow& row : rows) {
    for (std::size_t c = 0; c < width.size(); ++c) {
      width[c] = std::max(width[c], std::min(cap[c], row.columns[c].size()));
    }
  }
  std::array<std::size_t, 4> start{};  // where each column, and then the description, begins
  start[0] = 2;
  for (std::size_t c = 0; c < width.size(); ++c) start[c + 1] = start[c] + width[c] + 2;
  const auto pad_to = [](std::string& line, std::size_t column) {
    line += std::string(line.size() < column ? column - line.size() : 1, ' ');
  };
  for (const HelpRow& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c) {
      pad_to(line, start[c]);
      line += row.columns[c];
    }
    if (line.size() >= start[3]) {
      line += "\n" + std::string(start[3], ' ');  // description under its column
    } else {
      pad_to(line, start[3]);
    }
    out << line << row.doc << "\n";
  }
}

}  // namespace meshslice
