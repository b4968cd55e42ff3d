#pragma once
// TensorBoard event files without TensorFlow or a protobuf library: one file
// DIR/events.out.tfevents.<unix seconds>.meshslice (TensorBoard looks for "tfevents" in the name)
// of TFRecords, each a tensorflow.Event message encoded by hand, holding scalars (simple_value)
// and texts (the text plugin's string tensor). A resumed run reuses the file and cuts what the
// run it continues wrote after its checkpoint, so TensorBoard shows each step once.
//
//     TensorBoardWriter events(out + "/tensorboard", resumed_step);   // -1: start afresh
//     events.scalar("loss", step, loss, unix_seconds);
//     events.text("deck", step, deck_text, unix_seconds);
//     events.flush();                                 // a killed run's file holds these
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace meshslice {

class TensorBoardWriter {
 public:
  // Opens DIR/events.out.tfevents.* for appending, creating DIR. When DIR already holds an event
  // file written by this writer (a resumed run), it is reused: the records from the first one
  // with step > keep_through_step on, and a torn record at its end (a killed run), are cut off,
  // so the resumed run continues the file. Throws RankLocalError when DIR or the file cannot be
  // created or written.
  TensorBoardWriter(const std::string& dir, std::int64_t keep_through_step);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // A scalar, stored as TensorBoard does: a float32 simple_value.
  void scalar(const std::string& tag, std::int64_t step, double value, double wall_time);
  // A text for TensorBoard's text tab (markdown).
  void text(const std::string& tag, std::int64_t step, const std::string& text, double wall_time);
  // The records so far reach the file; throws RankLocalError when they cannot.
  void flush();

  // The largest step of the summaries kept from an earlier run's file; -1 when there were none
  // (a new file, or one cut down to its first record).
  std::int64_t last_step_kept() const { return last_step_kept_; }
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& event);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::int64_t last_step_kept_ = -1;
};

// Seconds since the Unix epoch: the wall_time TensorBoard expects of an event.
double unix_seconds_now();

// One summary value of an event, as far as this writer writes them.
struct EventValue {
  std::string tag;
  std::optional<float> simple_value;  // a scalar
  std::string plugin_name;            // "text" for a text
  std::vector<std::string> strings;   // the tensor's string_val: a text's text
};

// One complete, CRC-valid record of an event file.
struct EventRecord {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string file_version;  // "brain.Event:2" in a file's first record, else empty
  std::vector<EventValue> values;
  std::uint64_t end_offset = 0;  // the byte after this record in the file
};

// The records of the event file at PATH up to the first torn, corrupt or undecodable one: the
// file is valid up to the last record's end_offset (0 when none). Throws RankLocalError when it
// cannot be opened.
std::vector<EventRecord> read_event_records(const std::string& path);

}  // namespace meshslice
