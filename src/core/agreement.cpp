#include "core/agreement.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/broadcast_text.hpp"
#include "core/crc32.hpp"
#include "core/deck.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"

namespace meshslice {
namespace {

// Every string-valued key of the deck that names an existing file, as "key = value".
void named_files(const Teuchos::ParameterList& list, const std::string& prefix,
                 std::vector<AgreementPart>& parts) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string key = prefix.empty() ? list.name(it) : prefix + "." + list.name(it);
    const Teuchos::ParameterEntry& entry = list.entry(it);
    if (entry.isList()) {
      named_files(Teuchos::getValue<Teuchos::ParameterList>(entry), key, parts);
    } else if (entry.isType<std::string>()) {
      const std::string value = Teuchos::getValue<std::string>(entry);
      std::error_code error;
      if (!value.empty() && std::filesystem::is_regular_file(value, error))
        parts.push_back({concat("the file ", key, " = ", value), file_fingerprint(value)});
    }
  }
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
  std::vector<AgreementPart> parts{{"the resolved deck (after --set)",
                                    fingerprint(deck_yaml_text(deck))},
                                   {"the build (--version)", fingerprint(version_text())}};
  named_files(deck, "", parts);
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
    for (int r = 1; r < ranks; ++r)
      if (record(r)[0] != record(0)[0] || record(r)[i + 1] != record(0)[i + 1])
        differ += concat(differ.empty() ? "" : ", ", r);
    if (!differ.empty())
      problems += concat(problems.empty() ? "" : "; ", names[i], ": rank(s) ", differ,
                         " differ from rank 0");
  }
  if (problems.empty()) return;
  throw UserError(concat("the ranks do not agree on what to run: ", problems,
                         ". Every rank must run the same build with the same deck, --set options "
                         "and input files (check the launcher's per-rank arguments and working "
                         "directories)"));
}

}  // namespace meshslice
