#pragma once
// Training state that outlives the job. A checkpoint is a directory DIR/step-NNNNNNN holding
//   model.safetensors      every parameter as its global tensor ("blocks.3.ff1.weight"), in
//                          the run's float or double, or BF16 in a bf16 run
//   optimizer.safetensors  the optimizer's state under the parameters' names (".exp_avg", ...),
//                          and in a bf16 run the fp32 master weights (".master"), which a
//                          resume reads in place of the model file's rounded values
//   trainer.json           the step, the schedule's position, the task's seeds, the model's
//                          shape, the precision, the resolved deck, the build, each file's
//                          size and CRC-32
// written by every rank at once (checkpoint/tensor_file.hpp: each rank its own blocks, dp
// replicas and mesh rows holding copies write nothing twice), into step-NNNNNNN.partial, renamed
// into place only after every rank's write succeeded and trainer.json is complete; DIR/latest
// then points at it. A directory without trainer.json, or named .partial, is never loaded.
//
// Because the files hold global tensors, a checkpoint loads into any layout: another mesh
// shape, dp, pp split, plan (W or W^T storage), ZeRO on or off, or precision; each rank reads
// exactly its own blocks. Only the model's shape and the task must match.
//
// The checkpoint knows the parameter set (the tensors' names and shapes, whichever rank holds
// them), not the model: the model's shape is a record the model writes and checks
// (model/model_shape_record.hpp).
//
//     save_checkpoint(dir, keep, torus, model.parameters(), model.optimizer(), facts);
//     const std::string path = find_checkpoint("auto", out + "/checkpoints", comm);
//     if (!path.empty()) facts = load_checkpoint(path, torus, params, optimizer, run_facts, fits);
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>

#include "core/json.hpp"
#include "data/task_seeds.hpp"
#include "mesh/torus.hpp"
#include "parameters/optimizer.hpp"
#include "parameters/parameter_set.hpp"

namespace meshslice {

// The files of a checkpoint that a reader outside the trainer needs (checkpoint_reader.hpp).
constexpr const char* kCheckpointModelFile = "model.safetensors";
constexpr const char* kCheckpointTrainerFile = "trainer.json";

// What trainer.json records besides the files.
// What decides which sequences the steps after a checkpoint see, besides the data seed: a run
// resumed with another of these trains on (a batch or sequence-length schedule, another corpus),
// but not on the sequences the saved run would have seen, and the log says so.
struct DataStream {
  std::size_t seq_len = 0;
  std::size_t global_sequences = 0;  // per step, over the data-parallel replicas
  std::string dataset;               // a language model's data.prefix ("" for the teacher task)
  double held_out = 0;               // its held-out fraction
};

struct CheckpointFacts {
  std::size_t step = 0;     // steps done: the next step (and its data) is step + 1
  json::Value model;        // the model's shape, as the model records it
  std::string precision;    // train.precision: "float", "double", "bf16" or "tf32"
  OptimizerKind optimizer;  // the table's first: AdamW
  TaskSeeds seeds;
  DataStream data;
  double lr = 0;       // the learning rate of step `step`: the schedule's position
  std::string layout;  // the saving run's mesh, pipeline and plan (for the record)
  std::string deck;    // its resolved deck (YAML)
};

// "step-0000120".
std::string checkpoint_name(std::size_t step);

// Saves the state into dir/step-NNNNNNN and points dir/latest at it; with keep > 0, removes the
// oldest complete checkpoints beyond the newest `keep`. Collective over the torus. UserError on
// every rank when any rank fails (a full disk, a directory it cannot write): the previous
// checkpoints are untouched. Returns the checkpoint's path.
template <class T>
std::string save_checkpoint(const std::string& dir, std::size_t keep, const Torus& torus,
                            const ParameterSet<T>& params, const Optimizer<T>& optimizer,
                            const CheckpointFacts& facts);

// The checkpoint `request` names: a checkpoint directory, or "auto": the newest complete one
// under `dir` (a warning for each incomplete one passed over; "" when there is none).
// Collective: rank 0 looks, every rank gets the answer or the same UserError.
std::string find_checkpoint(const std::string& request, const std::string& dir, MPI_Comm comm);

// The model's word on a checkpoint's model record: throws UserError when this run's model cannot
// resume from the checkpoint at `path`, whose trainer.json recorded `saved`. Every rank calls it
// with the same record.
using ModelFits = std::function<void(const std::string& path, const json::Value& saved)>;

// Loads the checkpoint at `path` into this run's parameters and optimizer state, whatever their
// layout, and returns its facts. UserError on every rank when it does not fit the run (`fits`:
// the model's shape; `run`: the optimizer, the task's seeds), or its files are damaged (CRC-32),
// truncated or unreadable. Collective over the torus.
template <class T>
CheckpointFacts load_checkpoint(const std::string& path, const Torus& torus,
                                const ParameterSet<T>& params, const Optimizer<T>& optimizer,
                                const CheckpointFacts& run, const ModelFits& fits);

}  // namespace meshslice
