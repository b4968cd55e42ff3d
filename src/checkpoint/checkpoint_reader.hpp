#pragma once
// A checkpoint (checkpoint/checkpoint.hpp) read whole by one process, without MPI: what
// meshslice-export converts and what a test compares. trainer.json gives the model's shape and
// precision; model.safetensors every parameter as its global tensor, checked against the CRC-32
// trainer.json records.
//
//     const SerialCheckpoint c = read_checkpoint_serially("out/checkpoints/latest");
//     const CheckpointTensor& w = c.tensor("blocks.0.qkv.weight");  // w.rows() x w.cols()
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace meshslice {

struct CheckpointTensor {
  std::vector<std::uint64_t> shape;  // two dimensions: rows x cols (a gain 1 x H)
  std::vector<double> values;        // row-major; F32, F64 and BF16 alike, exactly
  std::size_t rows() const { return static_cast<std::size_t>(shape.at(0)); }
  std::size_t cols() const { return static_cast<std::size_t>(shape.at(1)); }
};

struct SerialCheckpoint {
  json::Value model;      // the model's shape as recorded (model/model_shape_record.hpp reads it)
  std::string precision;  // train.precision: "float", "double", "bf16" (BF16 tensors) or "tf32"
  std::size_t step = 0;
  std::map<std::string, CheckpointTensor> tensors;  // by name ("blocks.3.ff1.weight")
  // UserError naming the checkpoint when it lacks `name`.
  const CheckpointTensor& tensor(const std::string& name) const;
};

// The checkpoint in directory `path`; UserError naming what is missing, damaged (its CRC) or
// not a meshslice checkpoint.
SerialCheckpoint read_checkpoint_serially(const std::string& path);

}  // namespace meshslice
