#pragma once
// The safetensors file layout (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON naming each tensor's dtype, shape and data_offsets (relative
// to the end of the header) plus a "__metadata__" map of strings, then the tensors' raw
// little-endian row-major data back to back. The header is padded with spaces to a multiple of
// 8 bytes, as the reference implementation does, so every tensor starts aligned.
//
//     SafetensorsLayout out = safetensors_layout({{"w", "F32", {2, 3}}}, {{"step", "10"}});
//     ... out.prefix (write at 0), out.data_start + out.tensors[0].begin ...
//     SafetensorsLayout in = parse_safetensors_header(header_json, file_bytes);
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace meshslice {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // "F32" or "F64"
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // bytes, from the end of the header
  std::uint64_t elements() const;
};

struct SafetensorsLayout {
  std::vector<SafetensorsTensor> tensors;  // in file order
  std::map<std::string, std::string> metadata;
  std::string prefix;            // the 8 length bytes and the header (written layouts only)
  std::uint64_t data_start = 0;  // 8 + the header's length
  std::uint64_t file_bytes = 0;
  const SafetensorsTensor* find(const std::string& name) const;
};

// Bytes of one element of `dtype`: 4 for F32, 8 for F64, 2 for BF16; 0 for any other.
std::size_t dtype_bytes(const std::string& dtype);
// "F32" or "F64" for a scalar of `bytes` bytes.
const char* dtype_for_bytes(std::size_t bytes);

// The tensors (name, dtype, shape) laid out back to back in the given order.
SafetensorsLayout safetensors_layout(std::vector<SafetensorsTensor> tensors,
                                     const std::map<std::string, std::string>& metadata);

// The largest header accepted (the reference implementation's limit): a corrupt length must
// not make a reader allocate gigabytes.
constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

// The layout a header describes in a file of file_bytes bytes; std::runtime_error naming what
// is wrong (invalid JSON, a dtype other than F32 or F64, offsets that do not match the shape or
// leave gaps, data beyond the end of the file: truncated).
SafetensorsLayout parse_safetensors_header(const std::string& header, std::uint64_t file_bytes);

}  // namespace meshslice
