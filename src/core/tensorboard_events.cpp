// TensorBoard event files (see core/tensorboard_events.hpp).
//
// A file is a sequence of TFRecords: uint64 little-endian length, uint32 masked CRC-32C of those
// 8 bytes, the data, uint32 masked CRC-32C of the data. Each record's data is a serialized
// tensorflow.Event. The field numbers below are those of TensorBoard's own copies of the messages
// (tensorboard/compat/proto: event.proto, summary.proto, tensor.proto, types.proto).
#include "core/tensorboard_events.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <utility>

#include "core/crc32c.hpp"
#include "core/errors.hpp"

namespace meshslice {

namespace {

namespace fs = std::filesystem;

// Protobuf's wire types: how a field's value is laid out after its key (field << 3 | type).
enum WireType : unsigned { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Event (event.proto).
constexpr unsigned kEventWallTime = 1;     // double
constexpr unsigned kEventStep = 2;         // int64
constexpr unsigned kEventFileVersion = 3;  // string
constexpr unsigned kEventSummary = 5;      // Summary
// Summary (summary.proto).
constexpr unsigned kSummaryValue = 1;  // repeated Summary.Value
// Summary.Value.
constexpr unsigned kValueTag = 1;          // string
constexpr unsigned kValueSimpleValue = 2;  // float
constexpr unsigned kValueTensor = 8;       // TensorProto
constexpr unsigned kValueMetadata = 9;     // SummaryMetadata
// SummaryMetadata, and its PluginData.
constexpr unsigned kMetadataPluginData = 1;  // PluginData
constexpr unsigned kPluginName = 1;          // string
// TensorProto (tensor.proto).
constexpr unsigned kTensorDtype = 1;      // DataType (types.proto)
constexpr unsigned kTensorShape = 2;      // TensorShapeProto: empty for a scalar
constexpr unsigned kTensorStringVal = 8;  // repeated bytes
constexpr std::uint64_t kDtString = 7;    // DT_STRING

const char* const kFileVersion = "brain.Event:2";
const char* const kNamePrefix = "events.out.tfevents.";
const char* const kNameSuffix = ".meshslice";

// --- encoding ---

void put_varint(std::string& out, std::uint64_t value) {
  for (; value >= 0x80; value >>= 7) out.push_back(static_cast<char>((value & 0x7F) | 0x80));
  out.push_back(static_cast<char>(value));
}

void put_key(std::string& out, unsigned field, WireType type) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | type);
}

void put_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void put_bytes(std::string& out, unsigned field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

// An Event with `summary_or_version` (its field 3 or 5, already encoded) after time and step.
std::string encode_event(double wall_time, std::int64_t step, const std::string& summary_fields) {
  std::string event;
  std::uint64_t time_bits = 0;
  std::memcpy(&time_bits, &wall_time, sizeof time_bits);
  put_key(event, kEventWallTime, kFixed64);
  put_little_endian(event, time_bits, 8);
  // proto3 leaves out a zero, as TensorFlow's own writer does for the first record.
  if (step != 0) {
    put_key(event, kEventStep, kVarint);
    put_varint(event, static_cast<std::uint64_t>(step));  // negative: ten bytes, as protobuf
  }
  return event + summary_fields;
}

// The Event's summary field holding one Summary.Value.
std::string summary_of(const std::string& value) {
  std::string summary;
  put_bytes(summary, kSummaryValue, value);
  std::string field;
  put_bytes(field, kEventSummary, summary);
  return field;
}

std::string framed(const std::string& data) {
  std::string record;
  put_little_endian(record, data.size(), 8);
  put_little_endian(record, crc32c_masked(crc32c_update(0, record.data(), 8)), 4);
  record += data;
  put_little_endian(record, crc32c_masked(crc32c_update(0, data.data(), data.size())), 4);
  return record;
}

// --- decoding: what the writer writes; any other field is skipped by its wire type ---

struct Cursor {
  const unsigned char* p;
  const unsigned char* end;

  bool done() const { return p == end; }

  bool varint(std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && p != end; shift += 7) {
      const unsigned byte = *p++;
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  bool little_endian(int bytes, std::uint64_t& value) {
    if (end - p < bytes) return false;
    value = 0;
    for (int i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    p += bytes;
    return true;
  }

  bool length_delimited(Cursor& inner) {
    std::uint64_t length = 0;
    if (!varint(length) || length > static_cast<std::uint64_t>(end - p)) return false;
    inner = Cursor{p, p + length};
    p += length;
    return true;
  }

  bool skip(unsigned type) {
    std::uint64_t ignored = 0;
    Cursor inner{};
    switch (type) {
      case kVarint: return varint(ignored);
      case kFixed64: return little_endian(8, ignored);
      case kLengthDelimited: return length_delimited(inner);
      case kFixed32: return little_endian(4, ignored);
      default: return false;  // groups (3, 4) are not written by anything TensorBoard reads
    }
  }
};

// Calls on_field(field, type, cursor, read) for every field of the message in `c`. on_field
// sets `read` when it consumed the value (any other is skipped by its wire type) and returns
// false for a malformed value. False when the message is malformed.
template <class OnField>
bool for_each_field(Cursor c, OnField on_field) {
  while (!c.done()) {
    std::uint64_t key = 0;
    if (!c.varint(key)) return false;
    const auto field = static_cast<unsigned>(key >> 3);
    const auto type = static_cast<unsigned>(key & 7);
    bool read = false;
    if (!on_field(field, type, c, read)) return false;
    if (!read && !c.skip(type)) return false;
  }
  return true;
}

std::string string_of(const Cursor& c) { return std::string(c.p, c.end); }

bool decode_value(Cursor c, EventValue& value) {
  return for_each_field(c, [&](unsigned field, unsigned type, Cursor& in, bool& read) {
    Cursor inner{};
    if (field == kValueTag && type == kLengthDelimited) {
      read = true;
      if (!in.length_delimited(inner)) return false;
      value.tag = string_of(inner);
    } else if (field == kValueSimpleValue && type == kFixed32) {
      read = true;
      std::uint64_t bits = 0;
      if (!in.little_endian(4, bits)) return false;
      const auto bits32 = static_cast<std::uint32_t>(bits);
      float number = 0;
      std::memcpy(&number, &bits32, sizeof number);
      value.simple_value = number;
    } else if (field == kValueMetadata && type == kLengthDelimited) {
      read = true;
      if (!in.length_delimited(inner)) return false;
      return for_each_field(inner, [&](unsigned f, unsigned t, Cursor& meta, bool& r) {
        Cursor plugin{};
        if (f != kMetadataPluginData || t != kLengthDelimited) return true;
        r = true;
        if (!meta.length_delimited(plugin)) return false;
        return for_each_field(plugin, [&](unsigned pf, unsigned pt, Cursor& p, bool& pr) {
          Cursor name{};
          if (pf != kPluginName || pt != kLengthDelimited) return true;
          pr = true;
          if (!p.length_delimited(name)) return false;
          value.plugin_name = string_of(name);
          return true;
        });
      });
    } else if (field == kValueTensor && type == kLengthDelimited) {
      read = true;
      if (!in.length_delimited(inner)) return false;
      return for_each_field(inner, [&](unsigned f, unsigned t, Cursor& tensor, bool& r) {
        Cursor text{};
        if (f != kTensorStringVal || t != kLengthDelimited) return true;
        r = true;
        if (!tensor.length_delimited(text)) return false;
        value.strings.push_back(string_of(text));
        return true;
      });
    }
    return true;
  });
}

bool decode_event(Cursor c, EventRecord& record) {
  return for_each_field(c, [&](unsigned field, unsigned type, Cursor& in, bool& read) {
    Cursor inner{};
    std::uint64_t number = 0;
    if (field == kEventWallTime && type == kFixed64) {
      read = true;
      if (!in.little_endian(8, number)) return false;
      std::memcpy(&record.wall_time, &number, sizeof record.wall_time);
    } else if (field == kEventStep && type == kVarint) {
      read = true;
      if (!in.varint(number)) return false;
      record.step = static_cast<std::int64_t>(number);
    } else if (field == kEventFileVersion && type == kLengthDelimited) {
      read = true;
      if (!in.length_delimited(inner)) return false;
      record.file_version = string_of(inner);
    } else if (field == kEventSummary && type == kLengthDelimited) {
      read = true;
      if (!in.length_delimited(inner)) return false;
      return for_each_field(inner, [&](unsigned f, unsigned t, Cursor& summary, bool& r) {
        Cursor value{};
        if (f != kSummaryValue || t != kLengthDelimited) return true;
        r = true;
        if (!summary.length_delimited(value)) return false;
        record.values.emplace_back();
        return decode_value(value, record.values.back());
      });
    }
    return true;
  });
}

std::uint64_t little_endian_of(const unsigned char* p, int bytes) {
  Cursor c{p, p + bytes};
  std::uint64_t value = 0;
  c.little_endian(bytes, value);
  return value;
}

// Hands each complete, valid record of the file to `on_record` in order, until one is not or
// on_record returns false. Streams, because a long run's file outgrows what a resume should load.
void scan_event_file(const std::string& path, const std::function<bool(EventRecord&)>& on_record) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  std::FILE* file = ec ? nullptr : std::fopen(path.c_str(), "rb");
  if (file == nullptr)
    throw RankLocalError(concat("cannot read TensorBoard event file '", path,
                                "': ", ec ? ec.message() : std::strerror(errno),
                                "; check that it is a readable file"));
  std::uint64_t offset = 0;
  std::string data;
  for (;;) {
    unsigned char header[12];
    if (std::fread(header, 1, sizeof header, file) != sizeof header) break;
    if (crc32c_masked(crc32c_update(0, header, 8)) != little_endian_of(header + 8, 4)) break;
    const std::uint64_t length = little_endian_of(header, 8);
    // Cut short, or a length never written (but with a matching CRC by chance).
    if (size < offset + sizeof header || length > size - offset - sizeof header) break;
    data.resize(static_cast<std::size_t>(length) + 4);
    if (std::fread(&data[0], 1, data.size(), file) != data.size()) break;
    const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
    const auto n = static_cast<std::size_t>(length);
    if (crc32c_masked(crc32c_update(0, bytes, n)) != little_endian_of(bytes + n, 4)) break;
    EventRecord record;
    if (!decode_event(Cursor{bytes, bytes + n}, record)) break;
    offset += sizeof header + length + 4;
    record.end_offset = offset;
    if (!on_record(record)) break;
  }
  std::fclose(file);
}

// The event file an earlier run of this writer left in DIR ("" when none): the latest, should
// there be several.
std::string earlier_file(const std::string& dir) {
  std::string found;
  unsigned long long found_seconds = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t prefix = std::strlen(kNamePrefix), suffix = std::strlen(kNameSuffix);
    if (name.size() <= prefix + suffix || name.compare(0, prefix, kNamePrefix) != 0 ||
        name.compare(name.size() - suffix, suffix, kNameSuffix) != 0)
      continue;
    const std::string digits = name.substr(prefix, name.size() - prefix - suffix);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 19) continue;
    const unsigned long long seconds = std::stoull(digits);
    if (found.empty() || seconds > found_seconds) {
      found = entry.path().string();
      found_seconds = seconds;
    }
  }
  return found;
}

}  // namespace

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir, std::int64_t keep_through_step) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw RankLocalError(concat("cannot create the TensorBoard directory '", dir, "'",
                                ec ? ": " + ec.message() : std::string(" (a file is in the way)"),
                                "; check that --out names a writable directory"));
  path_ = earlier_file(dir);
  std::uint64_t keep_bytes = 0;
  if (!path_.empty()) {
    // Steps only grow along the file (each resume cuts before appending), so everything from
    // the first record past keep_through_step on belongs to the run being replaced.
    scan_event_file(path_, [&](EventRecord& record) {
      if (record.step > keep_through_step) return false;
      keep_bytes = record.end_offset;
      if (!record.values.empty() && record.step > last_step_kept_) last_step_kept_ = record.step;
      return true;
    });
    const std::uintmax_t size = fs::file_size(path_, ec);
    if (!ec && keep_bytes < size) fs::resize_file(path_, keep_bytes, ec);
    if (ec)
      throw RankLocalError(concat("cannot cut TensorBoard event file '", path_, "' to ", keep_bytes,
                                  " bytes for the resumed run: ", ec.message(),
                                  "; check that it is writable, or remove it"));
  } else {
    path_ = (fs::path(dir) /
             concat(kNamePrefix, static_cast<long long>(std::time(nullptr)), kNameSuffix))
                .string();
  }
  file_ = std::fopen(path_.c_str(), "ab");
  if (file_ == nullptr)
    throw RankLocalError(concat("cannot open TensorBoard event file '", path_,
                                "' for writing: ", std::strerror(errno),
                                "; check that --out names a writable directory"));
  if (keep_bytes == 0) {
    std::string version;
    put_bytes(version, kEventFileVersion, kFileVersion);
    write_record(encode_event(unix_seconds_now(), 0, version));
    flush();
  }
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardWriter::scalar(const std::string& tag, std::int64_t step, double value,
                               double wall_time) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  const auto number = static_cast<float>(value);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &number, sizeof bits);
  put_key(summary_value, kValueSimpleValue, kFixed32);
  put_little_endian(summary_value, bits, 4);
  write_record(encode_event(wall_time, step, summary_of(summary_value)));
}

void TensorBoardWriter::text(const std::string& tag, std::int64_t step, const std::string& text,
                             double wall_time) {
  // The text plugin's summary: a scalar DT_STRING tensor; its PluginData content, a
  // TextPluginData of version 0, serializes to nothing and is left out.
  std::string plugin_data;
  put_bytes(plugin_data, kPluginName, "text");
  std::string metadata;
  put_bytes(metadata, kMetadataPluginData, plugin_data);
  std::string tensor;
  put_key(tensor, kTensorDtype, kVarint);
  put_varint(tensor, kDtString);
  put_bytes(tensor, kTensorShape, "");
  put_bytes(tensor, kTensorStringVal, text);
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  put_bytes(summary_value, kValueTensor, tensor);
  put_bytes(summary_value, kValueMetadata, metadata);
  write_record(encode_event(wall_time, step, summary_of(summary_value)));
}

void TensorBoardWriter::write_record(const std::string& event) {
  const std::string record = framed(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size())
    throw RankLocalError(concat("cannot write TensorBoard event file '", path_, "': ",
                                std::strerror(errno), "; check that its directory has free space"));
}

void TensorBoardWriter::flush() {
  if (std::fflush(file_) != 0 || std::ferror(file_))
    throw RankLocalError(concat("cannot write TensorBoard event file '", path_, "': ",
                                std::strerror(errno), "; check that its directory has free space"));
}

std::vector<EventRecord> read_event_records(const std::string& path) {
  std::vector<EventRecord> records;
  scan_event_file(path, [&](EventRecord& record) {
    records.push_back(std::move(record));
    return true;
  });
  return records;
}

}  // namespace meshslice
