#include "data/indexed_dataset.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "data/indexed_dataset_format.hpp"
#include "data/little_endian.hpp"

namespace meshslice::data {

namespace {

constexpr const char* kRewrite =
    "write the dataset again (Megatron's tools/preprocess_data.py or meshslice-data) and keep "
    "PREFIX.bin and PREFIX.idx together";

std::string hex_bytes(const unsigned char* bytes, std::uint64_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (i > 0) text += ' ';
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

}  // namespace

IndexedDataset::IndexedDataset(const std::string& prefix, std::int64_t vocabulary)
    : idx_(prefix + ".idx", "the dataset's index"),
      bin_(prefix + ".bin", "the dataset's tokens"),
      vocabulary_(vocabulary) {
  MESHSLICE_ASSERT(vocabulary >= 1 && vocabulary <= std::int64_t{1} << 31, "vocabulary ",
                   vocabulary, " out of range");
  check_header();
  check_sequences();
  check_document_indices();
}

void IndexedDataset::check_header() {
  const std::string& path = idx_.path();
  const unsigned char* idx = idx_.data();
  const std::uint64_t size = idx_.size();
  const std::uint64_t magic_bytes = sizeof(kIndexMagic);
  require(size >= magic_bytes && std::memcmp(idx, kIndexMagic, magic_bytes) == 0, path,
          " is not a Megatron indexed dataset (its first bytes are '",
          hex_bytes(idx, std::min(size, magic_bytes)),
          "', not the magic 'MMIDIDX\\0\\0'): give the prefix of a PREFIX.bin/PREFIX.idx pair "
          "written by Megatron's tools/preprocess_data.py or meshslice-data");
  require(size >= kIndexHeaderBytes, path, " is truncated: ", size,
          " bytes, less than the 34-byte header; ", kRewrite);
  const auto version = load_little_endian<std::uint64_t>(idx + 9);
  require(version == kIndexVersion, path, ": version ", version,
          " of the indexed dataset format is not supported (meshslice reads version 1, "
          "Megatron's MMIDIDX); write it with a Megatron release that writes version 1");
  token_type_ = idx[17];
  token_bytes_ = token_type_bytes(token_type_);
  require(token_bytes_ > 0, path, ": token type code ", int{token_type_}, " (",
          token_type_name(token_type_),
          ") is not an integer token type (Megatron's codes: 1 uint8, 2 int8, 3 int16, 4 int32, "
          "5 int64, 8 uint16); ",
          kRewrite);
  const auto sequences = load_little_endian<std::uint64_t>(idx + 18);
  const auto document_indices = load_little_endian<std::uint64_t>(idx + 26);
  // Counted before multiplying: a damaged count must not wrap the expected size around.
  const std::uint64_t room = size - kIndexHeaderBytes;
  const bool counts_fit = sequences <= room / kIndexBytesPerSequence &&
                          document_indices <= room / kIndexBytesPerDocumentIndex;
  const std::uint64_t expected = counts_fit
                                     ? kIndexHeaderBytes + sequences * kIndexBytesPerSequence +
                                           document_indices * kIndexBytesPerDocumentIndex
                                     : std::numeric_limits<std::uint64_t>::max();
  require(!(counts_fit && size == expected + sequences && sequences > 0), path,
          " holds sequence modes after its document indices (a multimodal dataset): meshslice "
          "reads text datasets; write it without modes");
  require(size == expected, path, " is ", size, " bytes, but its header (", sequences,
          " sequences, ", document_indices, " document indices) says ",
          counts_fit ? concat(expected, " bytes") : std::string("more than the file holds"),
          ": the file is truncated or damaged; ", kRewrite);
  require(document_indices >= 1, path,
          ": no document indices (a valid index has at least "
          "the leading 0); ",
          kRewrite);
  sequences_ = static_cast<std::int64_t>(sequences);
  documents_ = static_cast<std::int64_t>(document_indices) - 1;
  lengths_at_ = kIndexHeaderBytes;
  pointers_at_ = lengths_at_ + 4 * sequences;
  document_indices_at_ = pointers_at_ + 8 * sequences;
}

void IndexedDataset::check_sequences() {
  const std::uint64_t bin_size = bin_.size();
  for (std::int64_t s = 0; s < sequences_; ++s) {
    const std::int64_t length = sequence_length(s);
    const std::int64_t pointer = sequence_pointer(s);
    require(length >= 0, idx_.path(), ": sequence ", s, " has a negative length ", length, "; ",
            kRewrite);
    const auto begin = static_cast<std::uint64_t>(pointer);
    const auto bytes = static_cast<std::uint64_t>(length) * token_bytes_;
    require(pointer >= 0 && begin <= bin_size && bytes <= bin_size - begin, idx_.path(),
            ": sequence ", s, " (", length, " tokens of ", token_bytes_, " bytes at byte ", pointer,
            ") lies outside ", bin_.path(), ", which has ", bin_size,
            " bytes: the .bin is truncated or belongs to another .idx; ", kRewrite);
    tokens_ += length;
  }
}

void IndexedDataset::check_document_indices() {
  std::int64_t previous = 0;
  for (std::int64_t d = 0; d <= documents_; ++d) {
    const std::int64_t first = first_sequence(d);
    require(d > 0 || first == 0, idx_.path(), ": document index 0 is ", first, ", not 0; ",
            kRewrite);
    require(first >= previous, idx_.path(), ": document index ", d, " is ", first,
            ", less than the one before (", previous, "): the indices must not decrease; ",
            kRewrite);
    previous = first;
  }
  require(previous == sequences_, idx_.path(), ": the last document index is ", previous,
          ", not the sequence count ", sequences_, "; ", kRewrite);
}

std::int64_t IndexedDataset::sequence_length(std::int64_t sequence) const {
  MESHSLICE_ASSERT(sequence >= 0 && sequence < sequences_, "sequence ", sequence, " of ",
                   sequences_);
  return load_little_endian<std::int32_t>(idx_.data() + lengths_at_ + 4 * sequence);
}

std::int64_t IndexedDataset::sequence_pointer(std::int64_t sequence) const {
  return load_little_endian<std::int64_t>(idx_.data() + pointers_at_ + 8 * sequence);
}

std::int64_t IndexedDataset::first_sequence(std::int64_t document) const {
  MESHSLICE_ASSERT(document >= 0 && document <= documents_, "document index ", document, " of ",
                   documents_ + 1);
  return load_little_endian<std::int64_t>(idx_.data() + document_indices_at_ + 8 * document);
}

std::int64_t IndexedDataset::document_length(std::int64_t document) const {
  std::int64_t tokens = 0;
  for (std::int64_t s = first_sequence(document); s < first_sequence(document + 1); ++s)
    tokens += sequence_length(s);
  return tokens;
}

void IndexedDataset::read(std::int64_t document, std::int64_t offset, std::int64_t count,
                          std::int32_t* out) const {
  MESHSLICE_ASSERT(offset >= 0 && count >= 0, "offset ", offset, ", count ", count);
  for (std::int64_t s = first_sequence(document); s < first_sequence(document + 1) && count > 0;
       ++s) {
    const std::int64_t length = sequence_length(s);
    if (offset >= length) {
      offset -= length;
      continue;
    }
    const std::int64_t taken = std::min(count, length - offset);
    read_sequence(document, s, offset, taken, out);
    out += taken;
    count -= taken;
    offset = 0;
  }
  MESHSLICE_ASSERT(count == 0, count, " tokens asked for past the end of document ", document);
}

void IndexedDataset::read_sequence(std::int64_t document, std::int64_t sequence,
                                   std::int64_t offset, std::int64_t count,
                                   std::int32_t* out) const {
  const unsigned char* bytes = bin_.data() + sequence_pointer(sequence) + offset * token_bytes_;
  for (std::int64_t i = 0; i < count; ++i, bytes += token_bytes_) {
    std::int64_t token = 0;
    switch (token_bytes_) {
      case 1:
        token = token_type_ == static_cast<std::uint8_t>(TokenType::int8)
                    ? load_little_endian<std::int8_t>(bytes)
                    : load_little_endian<std::uint8_t>(bytes);
        break;
      case 2:
        token = token_type_ == static_cast<std::uint8_t>(TokenType::int16)
                    ? load_little_endian<std::int16_t>(bytes)
                    : load_little_endian<std::uint16_t>(bytes);
        break;
      case 4: token = load_little_endian<std::int32_t>(bytes); break;
      default: token = load_little_endian<std::int64_t>(bytes); break;
    }
    require(token >= 0 && token < vocabulary_, bin_.path(), ": document ", document,
            " holds token id ", token, " (token ", offset + i, " of its sequence ", sequence,
            "), outside the model's vocabulary of ", vocabulary_, " (ids 0 to ", vocabulary_ - 1,
            "): tokenize the text with the model's tokenizer, or give the model the "
            "tokenizer's vocabulary size");
    out[i] = static_cast<std::int32_t>(token);
  }
}

std::vector<std::int32_t> IndexedDataset::document(std::int64_t document) const {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(document_length(document)));
  read(document, 0, static_cast<std::int64_t>(tokens.size()), tokens.data());
  return tokens;
}

}  // namespace meshslice::data
