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

}  // namespace meshslice::data
