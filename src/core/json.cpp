// JSON value, parser and writer (see core/json.hpp).
#include "core/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace meshslice::json {

namespace {

// Deep enough for any file we write; shallow enough that the recursive parser cannot exhaust
// the stack on a hostile file.
constexpr int kMaxDepth = 64;

// Parses a JSON number's text (already checked against the grammar) into a double; false when
// it lies beyond the range of a double. std::from_chars, unlike strtod, ignores the locale.
bool text_to_double(const std::string& text, double& result) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), result);
  return error == std::errc() && end == text.data() + text.size();
}

// A JSON integer: optional '-', then digits (the grammar already forbids leading zeros).
bool is_integer_text(const std::string& text) {
  const std::string_view digits =
      std::string_view(text).substr((!text.empty() && text[0] == '-') ? 1 : 0);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// "a number", "an object", "null": for messages about the wrong kind.
std::string with_article(Value::Kind kind) {
  if (kind == Value::Kind::null) return "null";
  const bool vowel = kind == Value::Kind::array || kind == Value::Kind::object;
  return std::string(vowel ? "an " : "a ") + kind_name(kind);
}

void append_indent(std::string& out, int indent, int level) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(level), ' ');
}

}  // namespace

const char* kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::null: return "null";
    case Value::Kind::boolean: return "boolean";
    case Value::Kind::number: return "number";
    case Value::Kind::string: return "string";
    case Value::Kind::array: return "array";
    case Value::Kind::object: return "object";
  }
  return "unknown";
}

// ---- Value ----------------------------------------------------------------------------------

Value::Value(double number) : kind_(Kind::number) {
  if (!std::isfinite(number)) {
    non_finite_ = number;
    return;
  }
  // The shortest text that reads back as the same double.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  text_.assign(buffer, result.ptr);
}

Value Value::number_or_null(double number) {
  return std::isfinite(number) ? Value(number) : Value();
}

void Value::set_integer_text(std::int64_t integer) {
  char buffer[32];
  text_.assign(buffer, std::to_chars(buffer, buffer + sizeof buffer, integer).ptr);
}

void Value::set_integer_text(std::uint64_t integer) {
  char buffer[32];
  text_.assign(buffer, std::to_chars(buffer, buffer + sizeof buffer, integer).ptr);
}

Value Value::array() {
  Value value;
  value.kind_ = Kind::array;
  return value;
}

Value Value::object() {
  Value value;
  value.kind_ = Kind::object;
  return value;
}

void Value::require_kind(Kind expected) const {
  if (kind_ != expected)
    throw Error(std::string("expected a JSON ") + kind_name(expected) + ", got " +
                with_article(kind_));
}

bool Value::as_bool() const {
  require_kind(Kind::boolean);
  return boolean_;
}

double Value::as_number() const {
  require_kind(Kind::number);
  if (text_.empty()) return non_finite_;
  double result = 0;
  if (!text_to_double(text_, result))
    throw Error("JSON number " + text_ + " is beyond the range of a double");
  return result;
}

const std::string& Value::as_string() const {
  require_kind(Kind::string);
  return text_;
}

std::uint64_t Value::as_uint() const {
  require_kind(Kind::number);
  std::uint64_t result = 0;
  const char* end = text_.data() + text_.size();
  // from_chars alone would accept a prefix ("1" of "1.5"); the whole text must be the integer.
  const auto [stop, error] = std::from_chars(text_.data(), end, result);
  if (text_.empty() || text_[0] == '-' || error != std::errc() || stop != end)
    throw Error("expected a non-negative integer that fits 64 bits, got " +
                (text_.empty() ? std::string("a non-finite number") : text_));
  return result;
}

const std::string& Value::number_text() const {
  require_kind(Kind::number);
  return text_;
}

const std::vector<Value>& Value::items() const {
  require_kind(Kind::array);
  return items_;
}

const std::vector<std::pair<std::string, Value>>& Value::members() const {
  require_kind(Kind::object);
  return members_;
}

const Value* Value::find(const std::string& key) const {
  require_kind(Kind::object);
  for (const auto& member : members_)
    if (member.first == key) return &member.second;
  return nullptr;
}

const Value& Value::at(const std::string& key) const {
  const Value* value = find(key);
  if (value == nullptr) throw Error("missing key " + quote(key));
  return *value;
}

Value& Value::push_back(Value value) {
  require_kind(Kind::array);
  items_.push_back(std::move(value));
  return items_.back();
}

Value& Value::set(const std::string& key, Value value) {
  require_kind(Kind::object);
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(value);
      return member.second;
    }
  }
  members_.emplace_back(key, std::move(value));
  return members_.back().second;
}

std::string Value::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Value::write(std::string& out, int indent, int level) const {
  switch (kind_) {
    case Kind::null: out += "null"; return;
    case Kind::boolean: out += boolean_ ? "true" : "false"; return;
    case Kind::number:
      if (text_.empty())
        throw Error("cannot write the non-finite number " + std::to_string(non_finite_) +
                    " as JSON");
      out += text_;
      return;
    case Kind::string: out += quote(text_); return;
    case Kind::array:
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out += ',';
        append_indent(out, indent, level + 1);
        items_[i].write(out, indent, level + 1);
      }
      if (!items_.empty()) append_indent(out, indent, level);
      out += ']';
      return;
    case Kind::object:
      out += '{';
      for (std::size_t i = 0; i < members_.size(); ++i) {
        if (i > 0) out += ',';
        append_indent(out, indent, level + 1);
        out += quote(members_[i].first);
        out += indent < 0 ? ":" : ": ";
        members_[i].second.write(out, indent, level + 1);
      }
      if (!members_.empty()) append_indent(out, indent, level);
      out += '}';
      return;
  }
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Value::Kind::null: return true;
    case Value::Kind::boolean: return a.boolean_ == b.boolean_;
    case Value::Kind::number: {
      if (a.text_ == b.text_) return a.text_.empty() ? a.non_finite_ == b.non_finite_ : true;
      // Texts differ. Integers compare exactly (2^64-1 and 2^64-2 are the same double); only
      // "-0" and "0" are equal integers with different texts, as JSON forbids leading zeros.
      if (is_integer_text(a.text_) && is_integer_text(b.text_))
        return (a.text_ == "0" || a.text_ == "-0") && (b.text_ == "0" || b.text_ == "-0");
      double x = a.non_finite_, y = b.non_finite_;
      if (!a.text_.empty() && !text_to_double(a.text_, x)) return false;
      if (!b.text_.empty() && !text_to_double(b.text_, y)) return false;
      return x == y;
    }
    case Value::Kind::string: return a.text_ == b.text_;
    case Value::Kind::array: return a.items_ == b.items_;
    case Value::Kind::object: return a.members_ == b.members_;
  }
  return false;
}

std::string quote(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// ---- Parser ---------------------------------------------------------------------------------

// Recursive descent over the bytes; every read checks the end first, so a truncated document
// ends in an Error like any other mistake.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value parse_document() {
    skip_whitespace();
    Value value = parse_value(0);
    skip_whitespace();
    if (!at_end()) fail(pos_, "unexpected " + describe(pos_) + " after the JSON value");
    return value;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }

  std::string describe(std::size_t at) const {
    if (at >= text_.size()) return "end of input";
    const unsigned char c = static_cast<unsigned char>(text_[at]);
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    static const char kHex[] = "0123456789ABCDEF";
    return std::string("byte 0x") + kHex[c >> 4] + kHex[c & 0xF];
  }

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw Error("invalid JSON at byte " + std::to_string(at) + ": " + what);
  }
  // "expected ':' after an object key, found 'x'"
  [[noreturn]] void fail_expected(const std::string& what) const {
    fail(pos_, "expected " + what + ", found " + describe(pos_));
  }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }

  void expect_literal(std::string_view literal) {
    for (std::size_t i = 0; i < literal.size(); ++i, ++pos_)
      if (at_end() || text_[pos_] != literal[i]) fail_expected("'" + std::string(literal) + "'");
  }

  Value parse_value(int depth) {
    if (at_end()) fail_expected("a JSON value");
    switch (peek()) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': return Value(parse_string());
      case 't': expect_literal("true"); return Value(true);
      case 'f': expect_literal("false"); return Value(false);
      case 'n': expect_literal("null"); return Value();
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        fail_expected("a JSON value");
    }
  }

  void enter_container(int depth) const {
    if (depth >= kMaxDepth)
      fail(pos_, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  Value parse_array(int depth) {
    enter_container(depth);
    Value array = Value::array();
    ++pos_;  // '['
    skip_whitespace();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return array;
    }
    for (;;) {
      skip_whitespace();
      array.items_.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (at_end() || (peek() != ',' && peek() != ']')) fail_expected("',' or ']' in an array");
      if (text_[pos_++] == ']') return array;
    }
  }

  Value parse_object(int depth) {
    enter_container(depth);
    Value object = Value::object();
    std::vector<std::size_t> key_offsets;  // for the message about a duplicate key
    ++pos_;                                // '{'
    skip_whitespace();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return object;
    }
    for (;;) {
      skip_whitespace();
      if (at_end() || peek() != '"') fail_expected("a string key in an object");
      key_offsets.push_back(pos_);
      std::string key = parse_string();
      skip_whitespace();
      if (at_end() || peek() != ':') fail_expected("':' after an object key");
      ++pos_;
      skip_whitespace();
      Value value = parse_value(depth + 1);
      object.members_.emplace_back(std::move(key), std::move(value));
      skip_whitespace();
      if (at_end() || (peek() != ',' && peek() != '}')) fail_expected("',' or '}' in an object");
      if (text_[pos_++] == '}') break;
    }
    check_unique_keys(object, key_offsets);
    return object;
  }

  // Sorting instead of a look-up per key keeps a header with thousands of tensors O(n log n).
  void check_unique_keys(const Value& object, const std::vector<std::size_t>& key_offsets) {
    const auto& members = object.members_;
    std::vector<std::size_t> order(members.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return members[a].first < members[b].first || (members[a].first == members[b].first && a < b);
    });
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (members[order[i - 1]].first == members[order[i]].first)
        fail(key_offsets[order[i]], "duplicate object key " + quote(members[order[i]].first));
    }
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail_expected("'\"' to end the string");
      const unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        parse_escape(out);
      } else if (c < 0x20) {
        fail(pos_, "control character " + describe(pos_) + " in a string must be escaped");
      } else if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
      } else {
        copy_utf8_sequence(out);
      }
    }
  }

  void parse_escape(std::string& out) {
    const std::size_t start = pos_;
    ++pos_;  // '\'
    if (at_end()) fail_expected("an escape character after '\\'");
    const char c = text_[pos_++];
    switch (c) {
      case '"': out += '"'; return;
      case '\\': out += '\\'; return;
      case '/': out += '/'; return;
      case 'b': out += '\b'; return;
      case 'f': out += '\f'; return;
      case 'n': out += '\n'; return;
      case 'r': out += '\r'; return;
      case 't': out += '\t'; return;
      case 'u': break;
      default: fail(start, "invalid escape \\" + std::string(1, c) + " in a string");
    }
    std::uint32_t code_point = parse_hex4();
    if (code_point >= 0xDC00 && code_point <= 0xDFFF)
      fail(start, "unpaired low surrogate in a \\u escape");
    if (code_point >= 0xD800 && code_point <= 0xDBFF) {
      // UTF-16 escapes a code point above U+FFFF as a high then a low surrogate.
      if (pos_ + 1 >= text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
        fail(start, "high surrogate in a \\u escape not followed by a low surrogate");
      pos_ += 2;
      const std::uint32_t low = parse_hex4();
      if (low < 0xDC00 || low > 0xDFFF)
        fail(start, "high surrogate in a \\u escape not followed by a low surrogate");
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, code_point);
  }

  std::uint32_t parse_hex4() {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (at_end()) fail_expected("4 hex digits after \\u");
      const char c = text_[pos_];
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) fail_expected("4 hex digits after \\u");
      value = value * 16 + static_cast<std::uint32_t>(digit);
    }
    return value;
  }

  // Copies one UTF-8 encoded code point, rejecting what RFC 3629 forbids (overlong forms,
  // surrogates, code points above U+10FFFF), so every string we hand out is valid UTF-8.
  void copy_utf8_sequence(std::string& out) {
    const std::size_t start = pos_;
    const unsigned char lead = peek();
    std::size_t continuation = 0;
    std::uint32_t code_point = 0, minimum = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      continuation = 1, code_point = lead & 0x1F, minimum = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      continuation = 2, code_point = lead & 0x0F, minimum = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      continuation = 3, code_point = lead & 0x07, minimum = 0x10000;
    } else {
      fail(start, "invalid UTF-8 lead " + describe(start) + " in a string");
    }
    for (std::size_t i = 1; i <= continuation; ++i) {
      if (start + i >= text_.size() ||
          (static_cast<unsigned char>(text_[start + i]) & 0xC0) != 0x80)
        fail(start, "truncated UTF-8 sequence in a string");
      code_point = (code_point << 6) | (static_cast<unsigned char>(text_[start + i]) & 0x3F);
    }
    if (code_point < minimum || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF))
      fail(start, "invalid UTF-8 sequence in a string");
    out.append(text_.substr(start, continuation + 1));
    pos_ = start + continuation + 1;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  The text is kept as it is.
  Value parse_number() {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (at_end() || !is_digit(peek())) fail_expected("a digit");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && is_digit(peek())) fail(start, "leading zeros are not allowed in a number");
    } else {
      skip_digits();
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (at_end() || !is_digit(peek())) fail_expected("a digit after the decimal point");
      skip_digits();
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !is_digit(peek())) fail_expected("a digit in the exponent");
      skip_digits();
    }
    Value number;
    number.kind_ = Value::Kind::number;
    number.text_ = std::string(text_.substr(start, pos_ - start));
    return number;
  }

  static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
  void skip_digits() {
    while (!at_end() && is_digit(peek())) ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

Value parse(std::string_view text) { return Parser(text).parse_document(); }

}  // namespace meshslice::json
