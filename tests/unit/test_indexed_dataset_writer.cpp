// The indexed dataset writer (data/indexed_dataset_writer.hpp) through the reader: documents,
// token types (uint16 up to 65536 ids, int32 above), sizes, and the atomic rename.
#include "data/indexed_dataset_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "data/indexed_dataset.hpp"
#include "test_support.hpp"

namespace meshslice::data {
namespace {

namespace fs = std::filesystem;

void expect_round_trip(std::int64_t vocabulary, int expected_code) {
  test::ScratchDir dir;
  const std::string prefix = (dir.path() / "set").string();
  const std::vector<std::vector<std::int32_t>> documents = {
      {0, 1, static_cast<std::int32_t>(vocabulary - 1)}, {}, {7}, {3, 3, 3, 3, 3}};
  {
    IndexedDatasetWriter writer(prefix, vocabulary);
    for (const auto& d : documents) writer.add_document(d);
    EXPECT_FALSE(fs::exists(prefix + ".bin")) << "under its name before finish()";
    writer.finish();
    EXPECT_EQ(static_cast<int>(writer.token_type()), expected_code);
    EXPECT_EQ(writer.documents(), 4);
    EXPECT_EQ(writer.tokens(), 9);
    EXPECT_EQ(static_cast<std::int64_t>(fs::file_size(prefix + ".idx")), writer.idx_bytes());
    EXPECT_EQ(static_cast<std::int64_t>(fs::file_size(prefix + ".bin")), writer.bin_bytes());
  }
  EXPECT_FALSE(fs::exists(prefix + ".bin.partial"));
  EXPECT_FALSE(fs::exists(prefix + ".idx.partial"));
  const IndexedDataset data(prefix, vocabulary);
  EXPECT_EQ(data.token_type_code(), expected_code);
  EXPECT_EQ(data.document_count(), 4);
  EXPECT_EQ(data.sequence_count(), 4);
  EXPECT_EQ(data.token_count(), 9);
  for (std::size_t d = 0; d < documents.size(); ++d)
    EXPECT_EQ(data.document(static_cast<std::int64_t>(d)), documents[d]) << "document " << d;
}

TEST(IndexedDatasetWriter, RoundTripsUint16Tokens) { expect_round_trip(65536, 8); }

TEST(IndexedDatasetWriter, RoundTripsInt32TokensAboveUint16) { expect_round_trip(65537, 4); }

TEST(IndexedDatasetWriter, LeavesNothingBehindWithoutFinish) {
  test::ScratchDir dir;
  const std::string prefix = (dir.path() / "set").string();
  {
    IndexedDatasetWriter writer(prefix, 257);
    writer.add_document({1, 2, 3});
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace meshslice::data
