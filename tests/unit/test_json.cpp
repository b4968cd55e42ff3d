// JSON values, parser and writer: round trips, exact integers, escapes, and every way a corrupt
// file must fail with a json::Error that names the byte, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "core/json.hpp"
#include "test_support.hpp"

namespace meshslice {
namespace {

// The message of the json::Error `action` throws; a test failure if it throws nothing or another
// type.
std::string json_error_of(const std::function<void()>& action) {
  return test::error_of<json::Error>(action, "json::Error");
}

std::string parse_error(const std::string& text) {
  return json_error_of([&] { json::parse(text); });
}

// A value with every kind, escapes, non-ASCII text and numbers at the edges.
json::Value sample_document() {
  json::Value document = json::Value::object();
  document.set("null", json::Value());
  document.set("yes", true);
  document.set("no", false);
  document.set("uint64 max", std::numeric_limits<std::uint64_t>::max());
  document.set("int64 min", std::numeric_limits<std::int64_t>::min());
  document.set("tenth", 0.1);
  document.set("huge", 1e300);
  document.set("tiny", -5e-324);
  document.set("escapes", "quote \" backslash \\ newline \n tab \t bell \x07 del \x7f");
  document.set("utf-8", "gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80");
  document.set("", "empty key");
  json::Value& list = document.set("list", json::Value::array());
  list.push_back(1);
  list.push_back(json::Value::array());
  list.push_back(json::Value::object());
  list.push_back(json::Value::array()).push_back("nested");
  document.set("object", json::Value::object()).set("inner", -2.5);
  return document;
}

TEST(Json, RoundTripsCompactAndPretty) {
  const json::Value document = sample_document();
  for (int indent : {-1, 0, 1, 2, 4}) {
    const std::string text = document.dump(indent);
    const json::Value back = json::parse(text);
    EXPECT_EQ(back, document) << "indent " << indent << ":\n" << text;
    EXPECT_EQ(back.dump(indent), text);
  }
}

TEST(Json, PrettyLayout) {
  json::Value document = json::Value::object();
  json::Value& list = document.set("a", json::Value::array());
  list.push_back(1);
  list.push_back(2);
  document.set("b", json::Value::object());
  document.set("c", json::Value::array());
  EXPECT_EQ(document.dump(2), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}");
  EXPECT_EQ(document.dump(), R"({"a":[1,2],"b":{},"c":[]})");
  EXPECT_EQ(json::Value::array().dump(2), "[]");
}

TEST(Json, ParsedTextIsWrittenBackExactly) {
  const std::string text =
      R"({"b":[1.50,-0,1E+3,2e-7,123456789012345678901234567890],"a":"x\/y","c":null})";
  // Numbers keep their text; "\/" is read as "/" and written without the needless escape.
  EXPECT_EQ(json::parse(text).dump(),
            R"({"b":[1.50,-0,1E+3,2e-7,123456789012345678901234567890],"a":"x/y","c":null})");
}

TEST(Json, ExactUnsignedIntegers) {
  const std::string max = "18446744073709551615";
  const json::Value parsed = json::parse(max);
  EXPECT_EQ(parsed.as_uint(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parsed.dump(), max);
  EXPECT_EQ(json::Value(std::numeric_limits<std::uint64_t>::max()).dump(), max);
  EXPECT_EQ(json::Value(std::numeric_limits<std::int64_t>::min()).dump(), "-9223372036854775808");
  EXPECT_EQ(json::Value(std::size_t{24}).dump(), "24");
  EXPECT_EQ(json::Value(7u).dump(), "7");
  EXPECT_EQ(json::Value(-3).dump(), "-3");
  EXPECT_EQ(json::parse("0").as_uint(), 0u);
  EXPECT_EQ(json::parse(" 9007199254740993 ").as_uint(), 9007199254740993u);  // 2^53 + 1
  // Integers differing beyond a double's precision are not equal.
  EXPECT_NE(json::parse("18446744073709551615"), json::parse("18446744073709551614"));
  EXPECT_EQ(json::parse("-0"), json::parse("0"));
  EXPECT_EQ(json::parse("1.0"), json::Value(1));
}

TEST(Json, AsUintRejectsWhatIsNotAnExactUnsignedInteger) {
  for (const char* text : {"-1", "1.5", "1e3", "18446744073709551616", "-0", "1.0"}) {
    const std::string message = json_error_of([&] { json::parse(text).as_uint(); });
    EXPECT_NE(message.find("non-negative integer"), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find(text), std::string::npos) << message;
  }
  EXPECT_EQ(json_error_of([] { json::Value("7").as_uint(); }),
            "expected a JSON number, got a string");
  EXPECT_NE(json_error_of([] { json::Value(std::nan("")).as_uint(); }).find("non-finite"),
            std::string::npos);
}

TEST(Json, DoublesRoundTripAndNonFiniteOnesAreRefused) {
  std::mt19937_64 generator(7);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t bits = generator();
    double number;
    static_assert(sizeof number == sizeof bits);
    std::memcpy(&number, &bits, sizeof number);
    if (!std::isfinite(number)) continue;
    const double back = json::parse(json::Value(number).dump()).as_number();
    EXPECT_EQ(std::memcmp(&back, &number, sizeof number), 0) << json::Value(number).dump();
  }
  EXPECT_EQ(json::Value(0.1).dump(), "0.1");
  EXPECT_EQ(json::Value(2.0).dump(), "2");
  EXPECT_EQ(json::parse("1e400").dump(), "1e400");
  EXPECT_NE(json_error_of([] { json::parse("1e400").as_number(); }).find("range of a double"),
            std::string::npos);
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    json::Value array = json::Value::array();
    array.push_back(bad);
    EXPECT_NE(json_error_of([&] { array.dump(); }).find("non-finite"), std::string::npos);
    EXPECT_TRUE(array.items()[0].is_number());
    if (std::isinf(bad)) {
      EXPECT_EQ(array.items()[0].as_number(), bad);
    }
  }
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(json::parse(R"("\u0041\u00e9\u20AC")").as_string(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(json::parse(R"("\u0000")").as_string(), std::string(1, '\0'));
  // A surrogate pair becomes one 4-byte UTF-8 sequence (U+1F600).
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(json::parse(R"("\uDBFF\uDFFF")").as_string(), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_EQ(json::quote("a\"b\\c\n\x01\x1f/\xC3\xA9"), R"("a\"b\\c\n\u0001\u001f/)"
                                                       "\xC3\xA9\"");
  std::string every_byte;
  for (int c = 0; c < 0x80; ++c) every_byte += static_cast<char>(c);
  EXPECT_EQ(json::parse(json::quote(every_byte)).as_string(), every_byte);
}

TEST(Json, TypedAccessNamesTheKinds) {
  const json::Value document = json::parse(R"({"n":1,"s":"x","a":[true],"o":{}})");
  EXPECT_EQ(json_error_of([&] { document.at("n").as_string(); }),
            "expected a JSON string, got a number");
  EXPECT_EQ(json_error_of([&] { document.at("s").as_bool(); }),
            "expected a JSON boolean, got a string");
  EXPECT_EQ(json_error_of([&] { document.at("a").members(); }),
            "expected a JSON object, got an array");
  EXPECT_EQ(json_error_of([&] { document.items(); }), "expected a JSON array, got an object");
  EXPECT_EQ(json_error_of([&] { document.at("missing"); }), "missing key \"missing\"");
  EXPECT_EQ(document.find("missing"), nullptr);
  ASSERT_NE(document.find("a"), nullptr);
  EXPECT_TRUE(document.find("a")->items().at(0).as_bool());
  EXPECT_TRUE(document.at("o").is_object());
  EXPECT_EQ(json_error_of([] { json::parse("null").as_number(); }),
            "expected a JSON number, got null");
  EXPECT_TRUE(json::parse("null").is_null());
  EXPECT_EQ(json::Value(nullptr).kind(), json::Value::Kind::null);
}

TEST(Json, SetReplacesInPlaceAndKeepsOrder) {
  json::Value object = json::Value::object();
  object.set("z", 1);
  object.set("a", 2);
  object.set("z", "three");
  EXPECT_EQ(object.dump(), R"({"z":"three","a":2})");
  const json::Value parsed = json::parse(R"({"b":1,"a":2,"c":3})");
  std::string order;
  for (const auto& member : parsed.members()) order += member.first;
  EXPECT_EQ(order, "bac");
}

TEST(Json, SafetensorsHeader) {
  const json::Value header =
      json::parse(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],)"
                  R"("data_offsets":[0,24]}})");
  EXPECT_EQ(header.at("__metadata__").at("format").as_string(), "pt");
  const json::Value& tensor = header.at("w");
  EXPECT_EQ(tensor.at("dtype").as_string(), "F32");
  ASSERT_EQ(tensor.at("shape").items().size(), 2u);
  EXPECT_EQ(tensor.at("shape").items()[0].as_uint(), 2u);
  EXPECT_EQ(tensor.at("shape").items()[1].as_uint(), 3u);
  EXPECT_EQ(tensor.at("data_offsets").items()[0].as_uint(), 0u);
  EXPECT_EQ(tensor.at("data_offsets").items()[1].as_uint(), 24u);
  EXPECT_EQ(header.members().size(), 2u);
  EXPECT_EQ(header.members()[1].first, "w");
}

TEST(Json, ErrorsNameTheByte) {
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {"", "invalid JSON at byte 0: expected a JSON value, found end of input"},
      {"   ", "invalid JSON at byte 3: expected a JSON value"},
      {R"({"a" 1})", "invalid JSON at byte 5: expected ':'"},
      {R"({"a":1,"b":2,"a":3})", "invalid JSON at byte 13: duplicate object key \"a\""},
      {R"({"a":1 "b":2})", "invalid JSON at byte 7: expected ',' or '}'"},
      {R"({"a":1,})", "invalid JSON at byte 7: expected a string key"},
      {R"({a:1})", "invalid JSON at byte 1: expected a string key"},
      {"[1,]", "invalid JSON at byte 3: expected a JSON value, found ']'"},
      {"[1 2]", "invalid JSON at byte 3: expected ',' or ']'"},
      {"1 2", "invalid JSON at byte 2: unexpected '2' after the JSON value"},
      {"{} x", "invalid JSON at byte 3: unexpected 'x'"},
      {"\"a\nb\"", "invalid JSON at byte 2: control character byte 0x0A"},
      {"\"a\tb\"", "invalid JSON at byte 2: control character byte 0x09"},
      {R"("ab\x")", "invalid JSON at byte 3: invalid escape \\x"},
      {R"("\u12G4")", "invalid JSON at byte 5: expected 4 hex digits"},
      {R"(["\ud800"])", "invalid JSON at byte 2: high surrogate"},
      {R"("\ud800\u0041")", "invalid JSON at byte 1: high surrogate"},
      {R"("\udc00")", "invalid JSON at byte 1: unpaired low surrogate"},
      {"\"\xFF\"", "invalid JSON at byte 1: invalid UTF-8 lead byte 0xFF"},
      {"\"\xC0\x80\"", "invalid JSON at byte 1: invalid UTF-8 lead byte 0xC0"},
      {"\"\xE0\x80\x80\"", "invalid JSON at byte 1: invalid UTF-8 sequence"},
      {"\"\xED\xA0\x80\"", "invalid JSON at byte 1: invalid UTF-8 sequence"},  // a surrogate
      {"\"\xC3\"", "invalid JSON at byte 1: truncated UTF-8 sequence"},
      {"\"abc", "invalid JSON at byte 4: expected '\"' to end the string, found end of input"},
      {"01", "invalid JSON at byte 0: leading zeros"},
      {"-", "invalid JSON at byte 1: expected a digit"},
      {"1.", "invalid JSON at byte 2: expected a digit after the decimal point"},
      {"1e+", "invalid JSON at byte 3: expected a digit in the exponent"},
      {".5", "invalid JSON at byte 0: expected a JSON value, found '.'"},
      {"+1", "invalid JSON at byte 0: expected a JSON value"},
      {"NaN", "invalid JSON at byte 0: expected a JSON value, found 'N'"},
      {"[Infinity]", "invalid JSON at byte 1: expected a JSON value"},
      {"tru", "invalid JSON at byte 3: expected 'true', found end of input"},
      {"nul1", "invalid JSON at byte 3: expected 'null'"},
      {"'a'", "invalid JSON at byte 0: expected a JSON value, found '''"},
      {"\xEF\xBB\xBF{}", "invalid JSON at byte 0: expected a JSON value, found byte 0xEF"},
  };
  for (const Case& c : cases) {
    const std::string message = parse_error(c.text);
    EXPECT_EQ(message.rfind(c.message, 0), 0u)
        << "for " << json::quote(c.text) << "\n  got " << message << "\n  not " << c.message;
  }
}

TEST(Json, NestingIsLimitedTo64Levels) {
  EXPECT_NO_THROW(json::parse(std::string(64, '[') + std::string(64, ']')));
  EXPECT_EQ(parse_error(std::string(65, '[') + std::string(65, ']')),
            "invalid JSON at byte 64: nesting deeper than 64 levels");
  EXPECT_EQ(parse_error(std::string(1000, '[')),
            "invalid JSON at byte 64: nesting deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_NE(parse_error(objects).find("nesting deeper than 64 levels"), std::string::npos);
}

TEST(Json, EveryTruncationOfADocumentIsAnError) {
  const std::string text = sample_document().dump(2);
  for (std::size_t length = 0; length < text.size(); ++length) {
    const std::string message = parse_error(text.substr(0, length));
    EXPECT_EQ(message.rfind("invalid JSON at byte ", 0), 0u) << "length " << length;
  }
}

TEST(Json, CorruptedBytesGiveValuesOrErrorsNeverCrashes) {
  const std::string text = sample_document().dump();
  std::mt19937 generator(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string corrupt = text;
    for (int flips = 0; flips < 3; ++flips)
      corrupt[generator() % corrupt.size()] = static_cast<char>(generator());
    try {
      const json::Value value = json::parse(corrupt);
      EXPECT_EQ(json::parse(value.dump()), value);  // what parses also writes and reads back
    } catch (const json::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("invalid JSON at byte ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace meshslice
