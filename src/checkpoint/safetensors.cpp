#include "checkpoint/safetensors.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/json.hpp"

namespace meshslice {
namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw std::runtime_error(concat("invalid safetensors header: ", what));
}

}  // namespace

std::uint64_t SafetensorsTensor::elements() const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape) n *= d;
  return n;
}

const SafetensorsTensor* SafetensorsLayout::find(const std::string& name) const {
  for (const SafetensorsTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F64") return 8;
  if (dtype == "BF16") return 2;
  return 0;
}

const char* dtype_for_bytes(std::size_t bytes) { return bytes == 8 ? "F64" : "F32"; }

SafetensorsLayout safetensors_layout(std::vector<SafetensorsTensor> tensors,
                                     const std::map<std::string, std::string>& metadata) {
  SafetensorsLayout out;
  json::Value header = json::Value::object();
  json::Value meta = json::Value::object();
  for (const auto& [key, value] : metadata) meta.set(key, value);
  header.set("__metadata__", meta);
  std::uint64_t at = 0;
  for (SafetensorsTensor& t : tensors) {
    t.begin = at;
    t.end = at = t.begin + t.elements() * dtype_bytes(t.dtype);
    json::Value shape = json::Value::array();
    for (const std::uint64_t d : t.shape) shape.push_back(json::Value(d));
    json::Value offsets = json::Value::array();
    offsets.push_back(json::Value(t.begin));
    offsets.push_back(json::Value(t.end));
    json::Value entry = json::Value::object();
    entry.set("dtype", t.dtype);
    entry.set("shape", shape);
    entry.set("data_offsets", offsets);
    header.set(t.name, entry);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  out.prefix = prefix + text;
  out.data_start = out.prefix.size();
  out.file_bytes = out.data_start + at;
  out.tensors = std::move(tensors);
  out.metadata = metadata;
  return out;
}

SafetensorsLayout parse_safetensors_header(const std::string& header, std::uint64_t file_bytes) {
  json::Value root;
  try {
    root = json::parse(header);
  } catch (const json::Error& e) {
    invalid(e.what());
  }
  if (!root.is_object()) invalid("not a JSON object");
  SafetensorsLayout out;
  out.data_start = 8 + header.size();
  try {
    for (const auto& [name, entry] : root.members()) {
      if (name == "__metadata__") {
        for (const auto& [key, value] : entry.members()) out.metadata[key] = value.as_string();
        continue;
      }
      SafetensorsTensor t;
      t.name = name;
      t.dtype = entry.at("dtype").as_string();
      if (dtype_bytes(t.dtype) == 0)
        invalid(
            concat("tensor ", name, " has dtype ", t.dtype, "; meshslice reads F32, F64 and BF16"));
      for (const json::Value& d : entry.at("shape").items()) t.shape.push_back(d.as_uint());
      const auto& offsets = entry.at("data_offsets").items();
      if (offsets.size() != 2) invalid(concat("tensor ", name, ": data_offsets needs 2 numbers"));
      t.begin = offsets[0].as_uint();
      t.end = offsets[1].as_uint();
      if (t.end < t.begin || t.end - t.begin != t.elements() * dtype_bytes(t.dtype))
        invalid(concat("tensor ", name, ": data_offsets [", t.begin, ", ", t.end,
                       "] do not hold its shape of ", t.elements(), " ", t.dtype, " elements"));
      out.tensors.push_back(t);
    }
  } catch (const json::Error& e) {
    invalid(e.what());
  }
  // The tensors must tile the data: no gaps, no overlaps (the reference implementation's rule).
  std::vector<const SafetensorsTensor*> by_offset;
  for (const SafetensorsTensor& t : out.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  std::uint64_t at = 0;
  for (const SafetensorsTensor* t : by_offset) {
    if (t->begin != at)
      invalid(concat("tensor ", t->name, " starts at byte ", t->begin, " of the data, not ", at));
    at = t->end;
  }
  out.file_bytes = out.data_start + at;
  if (out.file_bytes != file_bytes)
    throw std::runtime_error(
        concat("the file is ", file_bytes, " bytes but its header describes ", out.file_bytes,
               file_bytes < out.file_bytes ? " (truncated)" : " (trailing bytes)"));
  return out;
}

}  // namespace meshslice
