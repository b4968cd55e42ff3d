#include "checkpoint/checkpoint_reader.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/safetensors.hpp"
#include "core/bfloat16.hpp"
#include "core/crc32.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"

namespace meshslice {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path, const std::string& checkpoint) {
  std::ifstream in(path, std::ios::binary);
  require(in.good(), checkpoint, " is not a checkpoint: cannot read ", path.string(),
          " (give a checkpoint directory, e.g. OUT/checkpoints/latest)");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

const CheckpointTensor& SerialCheckpoint::tensor(const std::string& name) const {
  const auto it = tensors.find(name);
  require(it != tensors.end(), "the checkpoint has no tensor ", name);
  return it->second;
}

SerialCheckpoint read_checkpoint_serially(const std::string& path) {
  SerialCheckpoint c;
  json::Value root;
  try {
    root = json::parse(read_file(fs::path(path) / kCheckpointTrainerFile, path));
    c.model = root.at("model");
    c.precision = root.at("precision").as_string();
    c.step = root.at("step").as_uint();
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError(concat(path, "/", kCheckpointTrainerFile,
                           " is not a meshslice checkpoint's record: ", e.what()));
  }
  const std::string file = (fs::path(path) / kCheckpointModelFile).string();
  const std::string bytes = read_file(file, path);
  const std::string recorded = root.at("files").at(kCheckpointModelFile).at("crc32").as_string();
  const std::string crc = crc32_hex(crc32_update(0, bytes.data(), bytes.size()));
  require(crc == recorded, file, " fails its CRC-32 check (trainer.json records ", recorded,
          ", the file gives ", crc, "): the file is damaged; export another checkpoint");
  std::uint64_t header_bytes = 0;
  require(bytes.size() >= 8, file, " is truncated");
  std::memcpy(&header_bytes, bytes.data(), 8);  // little-endian, as the machines we run on
  require(header_bytes <= kMaxSafetensorsHeader && 8 + header_bytes <= bytes.size(), file,
          " is truncated or not a safetensors file");
  SafetensorsLayout layout;
  try {
    layout = parse_safetensors_header(bytes.substr(8, header_bytes), bytes.size());
  } catch (const std::exception& e) {
    throw UserError(concat(file, ": ", e.what()));
  }
  for (const SafetensorsTensor& t : layout.tensors) {
    CheckpointTensor& out = c.tensors[t.name];
    out.shape = t.shape;
    out.values.resize(t.elements());
    const char* data = bytes.data() + layout.data_start + t.begin;
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      if (t.dtype == "F64") {
        std::memcpy(&out.values[i], data + 8 * i, 8);
      } else if (t.dtype == "BF16") {
        bfloat16 value;
        std::memcpy(&value.bits, data + 2 * i, 2);
        out.values[i] = to_float(value);
      } else {
        float value = 0;
        std::memcpy(&value, data + 4 * i, 4);
        out.values[i] = value;
      }
    }
  }
  return c;
}

}  // namespace meshslice
