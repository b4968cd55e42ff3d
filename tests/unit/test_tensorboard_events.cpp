// TensorBoard event files: CRC-32C, records read back, the exact bytes of known records, and the
// cut on resume (steps past the checkpoint, a torn tail).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "core/errors.hpp"
#include "core/tensorboard_events.hpp"

namespace meshslice {
namespace {

namespace fs = std::filesystem;

std::uint32_t crc_of(const std::string& text) { return crc32c_update(0, text.data(), text.size()); }

// A directory of its own for each test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("meshslice-tb-" + std::string(test->name()) + "-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string only_event_file(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().string());
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? std::string() : files[0];
}

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

// The (tag, step) of every scalar in the file, with its value.
std::map<std::pair<std::string, std::int64_t>, float> scalars_of(
    const std::vector<EventRecord>& records) {
  std::map<std::pair<std::string, std::int64_t>, float> scalars;
  for (const EventRecord& record : records)
    for (const EventValue& value : record.values)
      if (value.simple_value) {
        const bool fresh =
            scalars.emplace(std::make_pair(value.tag, record.step), *value.simple_value).second;
        EXPECT_TRUE(fresh) << value.tag << " twice at step " << record.step;
      }
  return scalars;
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc_of(""), 0u);
  EXPECT_EQ(crc32c_update(0, nullptr, 0), 0u);
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (std::size_t split = 0; split <= text.size(); ++split)
    EXPECT_EQ(crc32c_update(crc32c_update(0, text.data(), split), text.data() + split,
                            text.size() - split),
              crc_of(text));
  EXPECT_EQ(crc32c_masked(0), 0xa282ead8u);
  EXPECT_EQ(crc32c_masked(0x00008000u), 0xa282ead9u);  // the rotation: bit 15 to bit 0
}

TEST(TensorBoardEvents, ScalarsAndTextReadBack) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.str() + "/tensorboard", 0);
    EXPECT_EQ(writer.last_step_kept(), -1);
    writer.text("deck", 0, "mesh = [2, 2]\n# a *deck*", 1.5e9);
    for (std::int64_t step = 1; step <= 5; ++step) {
      writer.scalar("loss", step, 4.0 / static_cast<double>(step),
                    1.5e9 + static_cast<double>(step));
      writer.scalar("lr", step, 1e-3 * static_cast<double>(step),
                    1.5e9 + static_cast<double>(step));
    }
    writer.scalar("negative", -3, -2.5, 1.5e9);
    writer.flush();
  }
  const std::string path = only_event_file(dir.str() + "/tensorboard");
  EXPECT_NE(fs::path(path).filename().string().find("tfevents"), std::string::npos);
  const std::vector<EventRecord> records = read_event_records(path);
  ASSERT_EQ(records.size(), 13u);
  EXPECT_EQ(records[0].file_version, "brain.Event:2");
  EXPECT_EQ(records[0].step, 0);
  EXPECT_TRUE(records[0].values.empty());
  EXPECT_EQ(records.back().end_offset, fs::file_size(path));

  ASSERT_EQ(records[1].values.size(), 1u);
  const EventValue& text = records[1].values[0];
  EXPECT_EQ(text.tag, "deck");
  EXPECT_EQ(text.plugin_name, "text");
  EXPECT_FALSE(text.simple_value);
  EXPECT_EQ(text.strings, std::vector<std::string>{"mesh = [2, 2]\n# a *deck*"});
  EXPECT_EQ(records[1].wall_time, 1.5e9);

  const auto scalars = scalars_of(records);
  ASSERT_EQ(scalars.size(), 11u);
  for (std::int64_t step = 1; step <= 5; ++step) {
    EXPECT_EQ(scalars.at({"loss", step}), static_cast<float>(4.0 / static_cast<double>(step)));
    EXPECT_EQ(scalars.at({"lr", step}), static_cast<float>(1e-3 * static_cast<double>(step)));
  }
  EXPECT_EQ(scalars.at({"negative", -3}), -2.5f);
}

TEST(TensorBoardEvents, RecordBytesAreTFRecordFramedEvents) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.str(), -1);
    writer.scalar("loss", 3, 0.5, 1700000000.25);
  }
  const std::vector<unsigned char> bytes = file_bytes(only_event_file(dir.str()));
  ASSERT_EQ(bytes.size(), 40u + 42u);
  // The first record: length 24, its masked CRC-32C, Event{wall_time (now), file_version}.
  const std::vector<unsigned char> first_header = {0x18, 0, 0,    0,    0,    0,
                                                   0,    0, 0xa3, 0x7f, 0x4b, 0x22};
  EXPECT_EQ(std::vector<unsigned char>(bytes.begin(), bytes.begin() + 12), first_header);
  EXPECT_EQ(bytes[12], 0x09);  // field 1, fixed64: wall_time
  const std::string version = "\x1a\x0d"
                              "brain.Event:2";
  EXPECT_EQ(std::string(bytes.begin() + 21, bytes.begin() + 36), version);
  // The scalar, byte for byte: Event{wall_time 1700000000.25, step 3, summary{value{tag "loss",
  // simple_value 0.5}}} as Python's protobuf serializes it, framed with Python-computed CRCs.
  const std::vector<unsigned char> scalar = {
      0x1a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x9b, 0xd8, 0x2d, 0x09, 0x00,
      0x00, 0x10, 0x40, 0xfc, 0x54, 0xd9, 0x41, 0x10, 0x03, 0x2a, 0x0d, 0x0a, 0x0b, 0x0a,
      0x04, 0x6c, 0x6f, 0x73, 0x73, 0x15, 0x00, 0x00, 0x00, 0x3f, 0x01, 0x7a, 0xa1, 0x6c};
  EXPECT_EQ(std::vector<unsigned char>(bytes.begin() + 40, bytes.end()), scalar);
}

TEST(TensorBoardEvents, ResumeCutsStepsAfterTheCheckpoint) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.str(), 0);
    writer.text("deck", 0, "first", 1.0);
    for (std::int64_t step = 1; step <= 10; ++step)
      writer.scalar("loss", step, static_cast<double>(step), 1.0);
    writer.flush();
  }
  const std::string path = only_event_file(dir.str());
  {
    TensorBoardWriter writer(dir.str(), 6);
    EXPECT_EQ(writer.last_step_kept(), 6);
    for (std::int64_t step = 7; step <= 8; ++step)
      writer.scalar("loss", step, 100.0 + static_cast<double>(step), 2.0);
    writer.flush();
  }
  EXPECT_EQ(only_event_file(dir.str()), path);  // continued, not a second file
  const std::vector<EventRecord> records = read_event_records(path);
  EXPECT_EQ(records.back().end_offset, fs::file_size(path));
  std::vector<std::int64_t> steps;
  for (const EventRecord& record : records) steps.push_back(record.step);
  EXPECT_EQ(steps, (std::vector<std::int64_t>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  const auto scalars = scalars_of(records);
  EXPECT_EQ(scalars.at({"loss", 6}), 6.0f);
  EXPECT_EQ(scalars.at({"loss", 7}), 107.0f);
  EXPECT_EQ(scalars.at({"loss", 8}), 108.0f);

  // A new run in the same directory (nothing kept): the file starts again from its first record.
  { TensorBoardWriter writer(dir.str(), -1); }
  const std::vector<EventRecord> restarted = read_event_records(path);
  ASSERT_EQ(restarted.size(), 1u);
  EXPECT_EQ(restarted[0].file_version, "brain.Event:2");
}

TEST(TensorBoardEvents, TornTailIsCutOnReopen) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.str(), 0);
    for (std::int64_t step = 1; step <= 4; ++step)
      writer.scalar("loss", step, static_cast<double>(step), 1.0);
  }
  const std::string path = only_event_file(dir.str());
  const std::uintmax_t whole = fs::file_size(path);
  fs::resize_file(path, whole - 3);  // a run killed while writing step 4
  std::vector<EventRecord> records = read_event_records(path);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records.back().step, 3);
  const std::uint64_t valid = records.back().end_offset;
  EXPECT_LT(valid, whole - 3);

  // A flipped byte in the last record's data fails its CRC: that record is dropped too.
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(valid - 6));
    file.put('\x7f');
  }
  EXPECT_EQ(read_event_records(path).size(), 3u);

  {
    TensorBoardWriter writer(dir.str(), 100);
    EXPECT_EQ(writer.last_step_kept(), 2);
    writer.scalar("loss", 3, 30.0, 2.0);
    writer.scalar("loss", 4, 40.0, 2.0);
  }
  records = read_event_records(path);
  EXPECT_EQ(records.back().end_offset, fs::file_size(path));
  const auto scalars = scalars_of(records);
  ASSERT_EQ(scalars.size(), 4u);
  EXPECT_EQ(scalars.at({"loss", 2}), 2.0f);
  EXPECT_EQ(scalars.at({"loss", 4}), 40.0f);
}

TEST(TensorBoardEvents, UnwritableDirectoryIsAnError) {
  TempDir dir;
  fs::create_directories(dir.str());
  const std::string blocker = dir.str() + "/file";
  std::ofstream(blocker) << "not a directory";
  try {
    TensorBoardWriter writer(blocker + "/tensorboard", 0);
    FAIL() << "no error";
  } catch (const RankLocalError& e) {
    EXPECT_NE(std::string(e.what()).find(blocker), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace meshslice
