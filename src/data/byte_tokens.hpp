#pragma once
// The byte-level tokenizer of meshslice-data: token t < 256 is the byte t, 256 ends a document.
// Any text (any encoding, any language) tokenizes without a vocabulary file, and a model trained
// on it decodes its output by writing the bytes back.
#include <cstdint>
#include <string>
#include <vector>

namespace meshslice::data {

inline constexpr std::int32_t kEndOfDocumentToken = 256;
inline constexpr std::int64_t kByteVocabulary = 257;

// The tokens of one document: its bytes, then the end-of-document token.
inline std::vector<std::int32_t> byte_tokens(const std::string& text) {
  std::vector<std::int32_t> tokens;
  tokens.reserve(text.size() + 1);
  for (const char c : text) tokens.push_back(static_cast<unsigned char>(c));
  tokens.push_back(kEndOfDocumentToken);
  return tokens;
}

// Tokens as text for a log line: the bytes as they are where printable, \n, \t, \xNN
// otherwise, and <eod> for the end of a document (an id outside the vocabulary: <N>).
inline std::string printable_bytes(const std::vector<int>& tokens) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  for (const int t : tokens) {
    if (t == kEndOfDocumentToken) {
      out += "<eod>";
    } else if (t < 0 || t > 255) {
      out += "<" + std::to_string(t) + ">";
    } else if (t == '\n') {
      out += "\\n";
    } else if (t == '\t') {
      out += "\\t";
    } else if (t == '\\') {
      out += "\\\\";
    } else if (t >= 32 && t < 127) {
      out += static_cast<char>(t);
    } else {
      out += "\\x";
      out += hex[t >> 4];
      out += hex[t & 15];
    }
  }
  return out;
}

}  // namespace meshslice::data
