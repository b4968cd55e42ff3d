// The indexed dataset reader (data/indexed_dataset.hpp) on files made here byte by byte from the
// format's description (Megatron-LM's MMIDIDX version 1), not by meshslice's writer, so a
// mistake shared by the reader and the writer cannot hide: its header, lengths, documents and
// tokens, and each kind of bad file as a UserError naming the file.
#include "data/indexed_dataset.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace meshslice::data {
namespace {

using test::expect_contains;
using test::ScratchDir;
using test::user_error_of;

// Little-endian packing of its own (the library's is what is under test).
void put(std::string& bytes, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Three documents in four uint16 sequences: [1 2 3 256], [10 11][12 256] (one document of two
// sequences, as preprocess_data.py --split-sentences writes), [5 256].
struct HandMade {
  std::string magic = std::string("MMIDIDX\0\0", 9);
  std::uint64_t version = 1;
  std::uint8_t code = 8;  // uint16
  std::vector<std::vector<std::uint16_t>> sequences = {
      {1, 2, 3, 256}, {10, 11}, {12, 256}, {5, 256}};
  std::vector<std::int64_t> document_indices = {0, 1, 3, 4};
  std::vector<std::int64_t> pointers;  // filled from the lengths when left empty

  std::string idx() {
    std::string bytes = magic;
    put(bytes, version, 8);
    put(bytes, code, 1);
    put(bytes, sequences.size(), 8);
    put(bytes, document_indices.size(), 8);
    for (const auto& s : sequences) put(bytes, s.size(), 4);
    std::int64_t pointer = 0;
    for (std::size_t i = 0; i < sequences.size(); ++i) {
      put(bytes, static_cast<std::uint64_t>(pointers.empty() ? pointer : pointers[i]), 8);
      pointer += 2 * static_cast<std::int64_t>(sequences[i].size());
    }
    for (const std::int64_t d : document_indices) put(bytes, static_cast<std::uint64_t>(d), 8);
    return bytes;
  }
  std::string bin() const {
    std::string bytes;
    for (const auto& s : sequences)
      for (const std::uint16_t token : s) put(bytes, token, 2);
    return bytes;
  }
  // Writes DIR/text.bin and DIR/text.idx (the index as given) and returns the prefix.
  std::string write(const ScratchDir& dir, const std::string& idx_bytes) const {
    dir.write("text.bin", bin());
    dir.write("text.idx", idx_bytes);
    return (dir.path() / "text").string();
  }
  std::string write(const ScratchDir& dir) { return write(dir, idx()); }
};

TEST(IndexedDataset, ReadsAHandMadeDataset) {
  ScratchDir dir;
  HandMade made;
  const IndexedDataset data(made.write(dir), 257);
  EXPECT_EQ(data.token_type_code(), 8);
  EXPECT_EQ(data.sequence_count(), 4);
  EXPECT_EQ(data.document_count(), 3);
  EXPECT_EQ(data.token_count(), 10);
  EXPECT_EQ(data.sequence_length(0), 4);
  EXPECT_EQ(data.sequence_length(2), 2);
  EXPECT_EQ(data.first_sequence(1), 1);
  EXPECT_EQ(data.document_length(1), 4);
  EXPECT_EQ(data.document(0), (std::vector<std::int32_t>{1, 2, 3, 256}));
  EXPECT_EQ(data.document(1), (std::vector<std::int32_t>{10, 11, 12, 256}));
  EXPECT_EQ(data.document(2), (std::vector<std::int32_t>{5, 256}));
  std::vector<std::int32_t> middle(2);
  data.read(1, 1, 2, middle.data());  // across the document's two sequences
  EXPECT_EQ(middle, (std::vector<std::int32_t>{11, 12}));
}

TEST(IndexedDataset, ReadsInt32Tokens) {
  ScratchDir dir;
  std::string idx, bin;
  idx = std::string("MMIDIDX\0\0", 9);
  put(idx, 1, 8);
  put(idx, 4, 1);  // int32
  put(idx, 1, 8);
  put(idx, 2, 8);
  put(idx, 3, 4);
  put(idx, 0, 8);
  put(idx, 0, 8);
  put(idx, 1, 8);
  for (const std::uint64_t token : {70000, 0, 99999}) put(bin, token, 4);
  dir.write("big.idx", idx);
  dir.write("big.bin", bin);
  const IndexedDataset data((dir.path() / "big").string(), 100000);
  EXPECT_EQ(data.document(0), (std::vector<std::int32_t>{70000, 0, 99999}));
}

TEST(IndexedDataset, AMissingFileIsAUserErrorNamingIt) {
  ScratchDir dir;
  const std::string prefix = (dir.path() / "absent").string();
  expect_contains(user_error_of([&] { IndexedDataset(prefix, 257); }),
                  {prefix + ".idx", "No such file"});
}

// The UserError opening the dataset with `idx_bytes` as its index: it names the .idx or the .bin.
std::string error_opening(HandMade& made, const std::string& idx_bytes) {
  ScratchDir dir;
  const std::string prefix = made.write(dir, idx_bytes);
  const std::string message = user_error_of([&] { IndexedDataset(prefix, 257); });
  EXPECT_NE(message.find(prefix + ".idx"), std::string::npos) << message;
  return message;
}

TEST(IndexedDataset, BadFilesAreUserErrorsNamingTheFile) {
  HandMade made;
  {
    std::string idx = made.idx();
    idx[0] = 'X';
    expect_contains(error_opening(made, idx),
                    {"is not a Megatron indexed dataset", "58 4d 49 44", "MMIDIDX"});
  }
  made.version = 2;
  expect_contains(error_opening(made, made.idx()), {"version 2", "reads version 1"});
  made.version = 1;
  made.code = 9;
  expect_contains(error_opening(made, made.idx()), {"token type code 9 (unknown)"});
  made.code = 7;
  expect_contains(error_opening(made, made.idx()), {"token type code 7 (float32)"});
  made.code = 8;
  {
    std::string idx = made.idx();
    idx.pop_back();
    expect_contains(error_opening(made, idx), {"is truncated or damaged", "4 sequences"});
    expect_contains(error_opening(made, idx.substr(0, 20)), {"is truncated", "34-byte header"});
  }
  made.pointers = {0, 8, 12, 100};
  {
    const std::string message = error_opening(made, made.idx());
    expect_contains(message, {"sequence 3", "at byte 100", "text.bin", "which has 20 bytes"});
  }
  made.pointers.clear();
  made.document_indices = {0, 3, 1, 4};
  expect_contains(error_opening(made, made.idx()), {"document index 2 is 1", "must not decrease"});
  made.document_indices = {0, 1, 3};
  expect_contains(error_opening(made, made.idx()),
                  {"last document index is 3, not the sequence count 4"});
  made.document_indices = {0, 1, 3, 4};
  {
    std::string idx = made.idx();
    idx += std::string(4, '\0');  // a multimodal index's sequence modes
    expect_contains(error_opening(made, idx), {"sequence modes", "multimodal"});
  }
}

TEST(IndexedDataset, ATokenOutsideTheVocabularyIsAUserErrorWhenItsDocumentIsRead) {
  ScratchDir dir;
  HandMade made;
  const std::string prefix = made.write(dir);
  const IndexedDataset data(prefix, 256);  // opening does not decode tokens
  std::vector<std::int32_t> first(3);
  data.read(1, 0, 3, first.data());  // 10 11 12: inside the vocabulary
  EXPECT_EQ(first, (std::vector<std::int32_t>{10, 11, 12}));
  expect_contains(user_error_of([&] { data.document(1); }),
                  {prefix + ".bin", "document 1 holds token id 256", "vocabulary of 256"});
}

}  // namespace
}  // namespace meshslice::data
