#pragma once
// A small JSON value with a strict parser and a writer, for the files the trainer reads back from
// disk (a safetensors header, a checkpoint's trainer.json). Those files are untrusted: a corrupt
// one must give a json::Error that says what is wrong and at which byte, never a crash, so the
// parser checks everything RFC 8259 asks for and limits nesting to 64 levels.
//
// Numbers keep their source text: as_uint() reads a safetensors offset exactly (a double would
// round above 2^53), and dump() writes a parsed number back exactly as it was read.
//
//     json::Value header = json::parse(text);
//     const json::Value& tensor = header.at("w");
//     std::uint64_t begin = tensor.at("data_offsets").items().at(0).as_uint();
//
//     json::Value state = json::Value::object();
//     state.set("step", std::uint64_t{1200});
//     state.set("loss", 2.75);
//     state.set("shape", json::Value::array()).push_back(4);
//     write_output_file(path, state.dump(2));
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace meshslice::json {

// Not a UserError: which kind of error a bad file is depends on who wrote it, so callers wrap
// it with the file's name and their own error type.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Value {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool boolean) : kind_(Kind::boolean), boolean_(boolean) {}
  // Non-finite doubles may be held (a loss that diverged) but dump() refuses them: JSON has no
  // spelling for them.
  Value(double number);
  // Every integer type, written exactly. One template instead of an overload per type, so that
  // `unsigned`, `long long` and `std::size_t` are never ambiguous; char and bool are excluded
  // because they are not meant as numbers.
  template <class Integer,
            std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool> &&
                                 !std::is_same_v<Integer, char>,
                             int> = 0>
  Value(Integer integer) : kind_(Kind::number) {
    if constexpr (std::is_signed_v<Integer>) {
      set_integer_text(static_cast<std::int64_t>(integer));
    } else {
      set_integer_text(static_cast<std::uint64_t>(integer));
    }
  }
  Value(std::string text) : kind_(Kind::string), text_(std::move(text)) {}
  Value(const char* text) : Value(std::string(text)) {}

  static Value array();
  static Value object();

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_number() const { return kind_ == Kind::number; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_object() const { return kind_ == Kind::object; }

  // Typed access: a value of another kind throws Error naming the expected and actual kinds.
  bool as_bool() const;
  // Throws Error for a parsed number beyond the range of a double (1e999).
  double as_number() const;
  const std::string& as_string() const;
  // The exact value of a number written as a non-negative integer that fits 64 bits; -1, 1.5,
  // 1e3 and 18446744073709551616 throw Error. Read from the text, never through a double.
  std::uint64_t as_uint() const;
  // The number exactly as it is written in the file or will be written by dump().
  const std::string& number_text() const;

  // Array elements.
  const std::vector<Value>& items() const;
  // Object members in file (or insertion) order. Lookups below are linear: iterate members()
  // to visit every member of a large object.
  const std::vector<std::pair<std::string, Value>>& members() const;
  // The member named `key`, or nullptr when there is none.
  const Value* find(const std::string& key) const;
  // The member named `key`; Error `missing key "key"` when there is none.
  const Value& at(const std::string& key) const;

  // Appends to an array; returns the new element (valid until the array grows again).
  Value& push_back(Value value);
  // Replaces the member named `key` in place or appends it; returns the member's value.
  Value& set(const std::string& key, Value value);

  // indent < 0: compact, no spaces. indent >= 0: one element per line, nested levels indented
  // by `indent` spaces. Throws Error for a non-finite number.
  std::string dump(int indent = -1) const;

  // A figure that may not be finite (a loss that diverged): null then, as JSON has no NaN.
  static Value number_or_null(double number);

 private:
  void set_integer_text(std::int64_t integer);
  void set_integer_text(std::uint64_t integer);
  void require_kind(Kind expected) const;
  void write(std::string& out, int indent, int level) const;
  friend class Parser;
  friend bool operator==(const Value& a, const Value& b);

  Kind kind_ = Kind::null;
  bool boolean_ = false;
  // Only for a number built from a non-finite double, whose text_ stays empty.
  double non_finite_ = 0;
  // A string's contents, or a number's JSON text.
  std::string text_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// Structural equality: same kinds, equal numbers (1 == 1.0; integers compared exactly), same
// strings, same items in order, same members in order.
bool operator==(const Value& a, const Value& b);
inline bool operator!=(const Value& a, const Value& b) { return !(a == b); }

// "null", "boolean", "number", ... for messages.
const char* kind_name(Value::Kind kind);

// Parses exactly one JSON value; whitespace may surround it, nothing else may follow. A bad
// document throws Error "invalid JSON at byte N: what is wrong" (N counts from 0).
Value parse(std::string_view text);

// `text` as a JSON string literal: quotes around it, `"`, `\` and control characters escaped,
// other bytes (UTF-8) copied.
std::string quote(std::string_view text);

}  // namespace meshslice::json
