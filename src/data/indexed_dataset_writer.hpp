#pragma once
// Writes a Megatron-LM indexed dataset, PREFIX.bin + PREFIX.idx (data/indexed_dataset_format.hpp,
// version 1), one sequence per document as Megatron's tools/preprocess_data.py does, tokens
// uint16 when the vocabulary fits (<= 65536 ids) and int32 otherwise. The files are written as
// PREFIX.bin.partial and PREFIX.idx.partial and renamed by finish() (core/output_file.hpp): a
// failed or killed run leaves no half-written dataset under the final names.
//
//     IndexedDatasetWriter writer("data/text", 257);
//     writer.add_document(tokens);   // each document ends with its end-of-document token
//     writer.finish();
#include <cstdint>
#include <string>
#include <vector>

#include "core/output_file.hpp"
#include "data/indexed_dataset_format.hpp"

namespace meshslice::data {

class IndexedDatasetWriter {
 public:
  IndexedDatasetWriter(const std::string& prefix, std::int64_t vocabulary);

  // Token ids must lie in [0, vocabulary); a document longer than the format's int32 sequence
  // length is a UserError.
  void add_document(const std::int32_t* tokens, std::int64_t count);
  void add_document(const std::vector<std::int32_t>& tokens) {
    add_document(tokens.data(), static_cast<std::int64_t>(tokens.size()));
  }
  // Writes the index and puts both files under their names.
  void finish();

  TokenType token_type() const { return token_type_; }
  std::int64_t documents() const { return static_cast<std::int64_t>(lengths_.size()); }
  std::int64_t tokens() const { return bin_bytes_ / token_bytes_; }
  const std::string& bin_path() const { return bin_.path(); }
  const std::string& idx_path() const { return idx_path_; }
  std::int64_t bin_bytes() const { return bin_bytes_; }
  // The index's size once written: its header and arrays.
  std::int64_t idx_bytes() const;

 private:
  OutputFile bin_;
  std::string idx_path_;
  std::int64_t vocabulary_;
  TokenType token_type_;
  int token_bytes_;
  std::vector<std::int32_t> lengths_;
  std::vector<std::int64_t> pointers_;
  std::int64_t bin_bytes_ = 0;
  std::string encoded_;  // one document's bytes, reused
};

}  // namespace meshslice::data
