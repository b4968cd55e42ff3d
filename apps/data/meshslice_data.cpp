// meshslice-data: prepares text for a language model. The files and folders given become a
// Megatron-LM indexed dataset (PREFIX.bin + PREFIX.idx, src/data/) of byte tokens, one document
// per distinct file, and the train/held-out split a trainer with the same fraction and seed uses
// is printed. One process, no MPI and no Kokkos: nothing here is parallel, and it runs where
// MPI cannot start (a login node). Exit status as the other apps': 0, 2 on bad input (one
// "meshslice-data: error: ..." line), 3 on an internal error.
#include <filesystem>
#include <iostream>
#include <limits>
#include <vector>

#include "core/app.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"
#include "data/byte_tokens.hpp"
#include "data/document_split.hpp"
#include "data/indexed_dataset.hpp"
#include "data/indexed_dataset_writer.hpp"
#include "data_command_line.hpp"
#include "text_documents.hpp"

namespace {

using namespace meshslice;
using namespace meshslice::dataapp;

constexpr const char* kApp = "meshslice-data";

// "1 document", "3 documents".
std::string counted(std::int64_t count, const std::string& noun) {
  return concat(count, " ", noun, count == 1 ? "" : "s");
}

void make_parent_folder(const std::string& prefix) {
  const std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  require(!ec, "cannot create the folder ", parent.string(), " of --out ", prefix, ": ",
          ec.message());
}

void print_counts(const DocumentCounts& counts, std::int64_t bytes, std::int64_t tokens) {
  std::cout << kApp << ": " << counted(counts.files, "file")
            << " read: " << counted(counts.documents, "document") << "; skipped "
            << counts.same_file << " reached again through links, " << counts.same_text
            << " with the content of an earlier file, " << counts.empty << " empty";
  if (counts.not_followed > 0)
    std::cout << ", " << counts.not_followed << " links to folders or special files not followed";
  std::cout << "\ndocuments " << counts.documents << ", bytes " << bytes << ", tokens " << tokens
            << " (a token per byte and one end-of-document token " << data::kEndOfDocumentToken
            << " per document; vocabulary " << data::kByteVocabulary << ")\n";
}

// The split as the trainer will make it, counted on the dataset just written (read back, so the
// files are known to open).
void print_split(const DataCommandLine& line) {
  const data::IndexedDataset dataset(line.prefix, data::kByteVocabulary);
  const data::DocumentSplit split =
      data::split_documents(dataset.document_count(), line.held_out, line.seed);
  const auto tokens_of = [&](const std::vector<std::int64_t>& documents) {
    std::int64_t tokens = 0;
    for (const std::int64_t d : documents) tokens += dataset.document_length(d);
    return tokens;
  };
  std::cout << "split (held-out fraction " << line.held_out << ", seed " << line.seed << "): train "
            << counted(static_cast<std::int64_t>(split.train.size()), "document") << ", "
            << tokens_of(split.train) << " tokens; held-out "
            << counted(static_cast<std::int64_t>(split.held_out.size()), "document") << ", "
            << tokens_of(split.held_out) << " tokens\n";
}

int prepare(const DataCommandLine& line) {
  make_parent_folder(line.prefix);
  data::IndexedDatasetWriter writer(line.prefix, data::kByteVocabulary);
  std::int64_t bytes = 0;
  const DocumentCounts counts =
      for_each_text_document(line.inputs, [&](const std::string& path, const std::string& text) {
        require(text.size() < std::numeric_limits<std::int32_t>::max(), path, " has ", text.size(),
                " bytes, more than one document of an indexed dataset holds "
                "(2^31 - 2 bytes): split it into smaller files");
        writer.add_document(data::byte_tokens(text));
        bytes += static_cast<std::int64_t>(text.size());
      });
  require(counts.documents > 0, "no documents: the ", line.inputs.size(),
          " input(s) hold no non-empty regular file (", counted(counts.files, "file"), " found, ",
          counts.empty, " empty); name text files or folders that contain them");
  writer.finish();
  print_counts(counts, bytes, writer.tokens());
  print_split(line);
  std::cout << "wrote " << writer.bin_path() << " (" << writer.bin_bytes() << " bytes, "
            << data::token_type_name(static_cast<std::uint8_t>(writer.token_type()))
            << " tokens) and " << writer.idx_path() << " (" << writer.idx_bytes() << " bytes)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_serial_app(kApp, [&] {
    const DataCommandLine line = parse_data_command_line(argc, argv);
    if (line.version) {
      std::cout << kApp << "\n" << version_text() << std::flush;
      return 0;
    }
    if (line.help) {
      std::cout << data_help() << std::flush;
      return 0;
    }
    return prepare(line);
  });
}
