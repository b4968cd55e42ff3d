#include "data/indexed_dataset_writer.hpp"

#include <limits>

#include "core/errors.hpp"
#include "data/little_endian.hpp"

namespace meshslice::data {

IndexedDatasetWriter::IndexedDatasetWriter(const std::string& prefix, std::int64_t vocabulary)
    : bin_(prefix + ".bin"),
      idx_path_(prefix + ".idx"),
      vocabulary_(vocabulary),
      token_type_(token_type_for(vocabulary)),
      token_bytes_(token_type_bytes(static_cast<std::uint8_t>(token_type_))) {
  MESHSLICE_ASSERT(vocabulary >= 1 && vocabulary <= std::numeric_limits<std::int32_t>::max(),
                   "vocabulary ", vocabulary);
}

void IndexedDatasetWriter::add_document(const std::int32_t* tokens, std::int64_t count) {
  require(count <= std::numeric_limits<std::int32_t>::max(), "document ", documents(), " has ",
          count, " tokens, more than the ", std::numeric_limits<std::int32_t>::max(),
          " an indexed dataset's sequence can hold: split it into smaller documents");
  encoded_.clear();
  for (std::int64_t i = 0; i < count; ++i) {
    MESHSLICE_ASSERT(tokens[i] >= 0 && tokens[i] < vocabulary_, "token ", tokens[i],
                     " outside the vocabulary of ", vocabulary_);
    if (token_type_ == TokenType::uint16)
      append_little_endian(encoded_, static_cast<std::uint16_t>(tokens[i]));
    else
      append_little_endian(encoded_, tokens[i]);
  }
  bin_.stream().write(encoded_.data(), static_cast<std::streamsize>(encoded_.size()));
  lengths_.push_back(static_cast<std::int32_t>(count));
  pointers_.push_back(bin_bytes_);
  bin_bytes_ += static_cast<std::int64_t>(encoded_.size());
}

std::int64_t IndexedDatasetWriter::idx_bytes() const {
  return static_cast<std::int64_t>(kIndexHeaderBytes + kIndexBytesPerSequence * lengths_.size() +
                                   kIndexBytesPerDocumentIndex * (lengths_.size() + 1));
}

void IndexedDatasetWriter::finish() {
  std::string index(kIndexMagic, sizeof(kIndexMagic));
  append_little_endian(index, kIndexVersion);
  append_little_endian(index, static_cast<std::uint8_t>(token_type_));
  append_little_endian(index, static_cast<std::uint64_t>(lengths_.size()));
  append_little_endian(index, static_cast<std::uint64_t>(lengths_.size() + 1));
  for (const std::int32_t length : lengths_) append_little_endian(index, length);
  for (const std::int64_t pointer : pointers_) append_little_endian(index, pointer);
  // One sequence per document: document d is sequence d.
  for (std::int64_t d = 0; d <= documents(); ++d) append_little_endian(index, d);
  MESHSLICE_ASSERT(static_cast<std::int64_t>(index.size()) == idx_bytes(), "index of ",
                   index.size(), " bytes");
  OutputFile idx(idx_path_);
  idx.stream().write(index.data(), static_cast<std::streamsize>(index.size()));
  idx.flush();
  // Both files are complete before either is renamed: the .idx last, so a reader that finds a
  // new .idx finds its .bin too.
  bin_.commit();
  idx.commit();
}

}  // namespace meshslice::data
