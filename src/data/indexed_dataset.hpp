#pragma once
// Reads a Megatron-LM indexed dataset, PREFIX.bin + PREFIX.idx (data/indexed_dataset_format.hpp),
// as Megatron's tools/preprocess_data.py or meshslice-data wrote it. Both files are mapped
// read-only and checked whole when opened (magic, version, token type, sizes, every sequence
// inside the .bin, the document indices), so a wrong or damaged file is one clear UserError at
// start-up; tokens are decoded only when read, and a token outside the model's vocabulary is a
// UserError naming the file and the document then.
#include <cstdint>
#include <string>
#include <vector>

#include "data/mapped_file.hpp"

namespace meshslice::data {

class IndexedDataset {
 public:
  // `vocabulary`: the model's; token ids must lie in [0, vocabulary).
  IndexedDataset(const std::string& prefix, std::int64_t vocabulary);

  const std::string& bin_path() const { return bin_.path(); }
  const std::string& idx_path() const { return idx_.path(); }
  std::int64_t vocabulary() const { return vocabulary_; }
  std::uint8_t token_type_code() const { return token_type_; }

  std::int64_t sequence_count() const { return sequences_; }
  std::int64_t document_count() const { return documents_; }
  std::int64_t token_count() const { return tokens_; }
  std::int64_t sequence_length(std::int64_t sequence) const;
  // Document d is the sequences [first_sequence(d), first_sequence(d + 1)).
  std::int64_t first_sequence(std::int64_t document) const;
  std::int64_t document_length(std::int64_t document) const;  // in tokens

  // Copies `count` tokens of `document`, from its token `offset` on, to `out`.
  void read(std::int64_t document, std::int64_t offset, std::int64_t count,
            std::int32_t* out) const;
  std::vector<std::int32_t> document(std::int64_t document) const;

 private:
  std::int64_t sequence_pointer(std::int64_t sequence) const;
  void check_header();
  void check_sequences();
  void check_document_indices();
  void read_sequence(std::int64_t document, std::int64_t sequence, std::int64_t offset,
                     std::int64_t count, std::int32_t* out) const;

  MappedFile idx_, bin_;
  std::int64_t vocabulary_;
  std::uint8_t token_type_ = 0;
  int token_bytes_ = 0;
  std::int64_t sequences_ = 0, documents_ = 0, tokens_ = 0;
  // Byte offsets of the three arrays in the .idx.
  std::uint64_t lengths_at_ = 0, pointers_at_ = 0, document_indices_at_ = 0;
};

}  // namespace meshslice::data
