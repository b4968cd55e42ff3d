#pragma once
// Megatron-LM's indexed dataset ("MMIDIDX", version 1; megatron/core/datasets/indexed_dataset.py),
// what Megatron's tools/preprocess_data.py writes and its GPT datasets read:
//
//   PREFIX.bin  the token ids of every sequence, back to back, each little-endian of the type below
//   PREFIX.idx  offset  size      field
//               0       9         magic "MMIDIDX\0\0"
//               9       8 <Q      version, 1
//               17      1 <B      token type code (Megatron's DType: TokenType below)
//               18      8 <Q      S, the number of sequences
//               26      8 <Q      D, the number of document indices (documents + 1)
//               34      4 S <i4   each sequence's length in tokens
//               +       8 S <i8   each sequence's byte offset in PREFIX.bin
//               +       8 D <i8   document indices: document d is sequences [idx[d], idx[d+1]);
//                                 idx[0] = 0, idx[D-1] = S
//               (+      S <i1     sequence modes, multimodal datasets only: not read here)
//
// preprocess_data.py writes one sequence per document (several with --split-sentences) and ends
// each document with the tokenizer's end-of-document token when given --append-eod.
#include <cstdint>
#include <string>

namespace meshslice::data {

inline constexpr char kIndexMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
inline constexpr std::uint64_t kIndexVersion = 1;
inline constexpr std::uint64_t kIndexHeaderBytes = 34;
// Per sequence in the .idx: its int32 length and int64 pointer.
inline constexpr std::uint64_t kIndexBytesPerSequence = 4 + 8;
inline constexpr std::uint64_t kIndexBytesPerDocumentIndex = 8;

// Megatron's DType codes. The float types (6 float64, 7 float32) exist there but hold no token ids.
enum class TokenType : std::uint8_t {
  uint8 = 1,
  int8 = 2,
  int16 = 3,
  int32 = 4,
  int64 = 5,
  uint16 = 8,
};

// Bytes per token of a code this reader accepts, 0 for any other code.
int token_type_bytes(std::uint8_t code);
// "uint16", "float32", ... for a known code; "unknown" otherwise.
std::string token_type_name(std::uint8_t code);
// The type Megatron's writer would use for token ids below `vocabulary`: uint16 when they fit.
TokenType token_type_for(std::int64_t vocabulary);

}  // namespace meshslice::data
