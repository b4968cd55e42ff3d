#include "core/agreement.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/broadcast_text.hpp"
#include "core/crc32.hpp"
#include "core/deck.hpp"
#include "core/deck_internal.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"

namespace meshslice {
namespace {

// Calls visit(dotted key, entry) for every value of the deck, in its order, sublists walked.
void for_each_value(
    const Teuchos::ParameterList& list, const std::string& prefix,
    const std::function<void(const std::string&, const Teuchos::ParameterEntry&)>& visit) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string key = deck_detail::join_key(prefix, list.name(it));
    const Teuchos::ParameterEntry& entry = list.entry(it);
    if (entry.isList())
      for_each_value(Teuchos::getValue<Teuchos::ParameterList>(entry), key, visit);
    else
      visit(key, entry);
  }
}

// The deck as "dotted.key: value" lines (a line break inside a value written as \n).
std::string deck_facts(const Teuchos::ParameterList& deck) {
  std::string facts;
  for_each_value(deck, "", [&](const std::string& key, const Teuchos::ParameterEntry& entry) {
    std::string value = deck_detail::value_text(entry);
    for (auto at = value.find('\n'); at != std::string::npos; at = value.find('\n', at + 2))
      value.replace(at, 1, "\\n");
    facts += concat(key, ": ", value, "\n");
  });
  return facts;
}

// Every string-valued key of the deck that names an existing file, as "key = value".
void named_files(const Teuchos::ParameterList& deck, std::vector<AgreementPart>& parts) {
  for_each_value(deck, "", [&](const std::string& key, const Teuchos::ParameterEntry& entry) {
    if (!entry.isType<std::string>()) return;
    const std::string value = Teuchos::getValue<std::string>(entry);
    std::error_code error;
    if (!value.empty() && std::filesystem::is_regular_file(value, error))
      parts.push_back({concat("the file ", key, " = ", value), file_fingerprint(value), ""});
  });
}

// "key: value" lines as a map (a line without ": " is kept whole as its own key).
std::map<std::string, std::string> fact_map(const std::string& facts) {
  std::map<std::string, std::string> map;
  std::istringstream lines(facts);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos)
      map[line] = "";
    else
      map[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return map;
}

// " in optimizer.lr: 0.003 on rank 0, 0.001 on rank 1; ..." for the keys whose values differ
// between rank 0's facts and rank `other`'s (at most a few, then how many more).
std::string differing_facts(const std::string& facts0, const std::string& facts_other, int other) {
  const auto zero = fact_map(facts0), theirs = fact_map(facts_other);
  std::map<std::string, std::pair<std::string, std::string>> differ;  // key -> (rank 0, other)
  for (const auto& [key, value] : zero) {
    const auto it = theirs.find(key);
    if (it == theirs.end())
      differ[key] = {value, "(absent)"};
    else if (it->second != value)
      differ[key] = {value, it->second};
  }
  for (const auto& [key, value] : theirs)
    if (!zero.count(key)) differ[key] = {"(absent)", value};
  if (differ.empty()) return "";
  constexpr std::size_t kShown = 6;
  std::string text = " in ";
  std::size_t shown = 0;
  for (const auto& [key, values] : differ) {
    if (shown == kShown) {
      text += concat(" and ", differ.size() - kShown, " more key(s)");
      break;
    }
    text +=
        concat(shown ? "; " : "", key, ": ", values.first.empty() ? "''" : values.first,
               " on rank 0, ", values.second.empty() ? "''" : values.second, " on rank ", other);
    ++shown;
  }
  return text;
}

}  // namespace

std::uint64_t fingerprint(const std::string& bytes) {
  return (static_cast<std::uint64_t>(bytes.size()) << 32) ^
         crc32_update(0, bytes.data(), bytes.size());
}

std::uint64_t file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ~std::uint64_t{0};  // missing or unreadable here
  std::ostringstream text;
  text << in.rdbuf();
  return fingerprint(text.str());
}

std::vector<AgreementPart> inputs_to_agree_on(const Teuchos::ParameterList& deck) {
  std::vector<AgreementPart> parts{
      {"the resolved deck (after --set)", fingerprint(deck_yaml_text(deck)), deck_facts(deck)},
      {"the build (--version)", fingerprint(version_text()), version_text()}};
  named_files(deck, parts);
  return parts;
}

void require_agreement(MPI_Comm comm, const std::vector<AgreementPart>& parts) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  // A fixed-size record per rank: the part count, then the fingerprints of the first parts.
  constexpr std::size_t kParts = 16;
  std::vector<std::uint64_t> mine(kParts + 1, 0), all((kParts + 1) * ranks);
  mine[0] = parts.size();
  for (std::size_t i = 0; i < parts.size() && i < kParts; ++i) mine[i + 1] = parts[i].print;
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(),
                static_cast<int>(mine.size()), MPI_UINT64_T, comm);
  // Rank 0's names for the parts: every rank builds the same message from the same record.
  std::string names_text;
  for (const AgreementPart& part : parts) names_text += part.name + '\n';
  names_text = broadcast_text(comm, names_text);
  std::vector<std::string> names;
  std::istringstream lines(names_text);
  for (std::string line; std::getline(lines, line);) names.push_back(line);

  std::string problems;
  const auto record = [&](int r) {
    return all.data() + (kParts + 1) * static_cast<std::size_t>(r);
  };
  for (std::size_t i = 0; i < names.size() && i < kParts; ++i) {
    std::string differ;
    int first = 0;  // the first rank that differs
    for (int r = 1; r < ranks; ++r)
      if (record(r)[0] != record(0)[0] || record(r)[i + 1] != record(0)[i + 1]) {
        differ += concat(differ.empty() ? "" : ", ", r);
        if (first == 0) first = r;
      }
    if (differ.empty()) continue;
    // The keys behind the fingerprint: rank 0's and the first differing rank's facts, sent to
    // every rank so that each builds the same message. Every rank has the same records, so all
    // make the same two broadcasts. A rank with fewer parts sends no facts.
    const auto facts_of = [&](int root) {
      return broadcast_text(comm, root == rank && i < parts.size() ? parts[i].facts : "", root);
    };
    const std::string facts0 = facts_of(0), facts_first = facts_of(first);
    problems += concat(problems.empty() ? "" : "; ", names[i], ": rank(s) ", differ,
                       " differ from rank 0", differing_facts(facts0, facts_first, first));
  }
  if (problems.empty()) return;
  throw UserError(concat("the ranks do not agree on what to run: ", problems,
                         ". Every rank must run the same build with the same deck, --set options "
                         "and input files (check the launcher's per-rank arguments and working "
                         "directories)"));
}

}  // namespace meshslice
