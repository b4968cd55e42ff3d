#pragma once
// What the trainer, the checkpoint, the deck and the tuner know of an optimizer without its
// kernels: its place in the table (optimizers/optimizer_table.hpp), its name, its state tensors
// and its deck keys, and a run's settings: the learning-rate schedule, the clipping and the
// values of the optimizer's keys. A new optimizer is one file of optimizers/ and a line of the
// table; nothing here changes.
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace meshslice {

// An optimizer by its place in the table. The default is the table's first entry (AdamW).
struct OptimizerKind {
  std::size_t index = 0;
  friend bool operator==(OptimizerKind a, OptimizerKind b) { return a.index == b.index; }
  friend bool operator!=(OptimizerKind a, OptimizerKind b) { return a.index != b.index; }
};

// A deck key of an optimizer (optimizer.<key>): its default and the half-open range
// [min, below) a value must lie in. Optimizers that read the same key share one definition.
struct OptimizerKey {
  const char* key;
  double default_value;
  double min;
  double below;
  std::string doc;
};
constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// The state tensors an optimizer keeps per parameter, by the suffix a checkpoint gives them
// ("blocks.3.ff1.weight.exp_avg"): `states`, shaped like what the optimizer updates of the
// parameter. A factored optimizer (Adafactor) keeps for a weight matrix (rows and columns over
// 1) `factored_states` in their place: one tensor of a value per row of it (rows x 1) and one of
// a value per column (1 x cols), whole on every rank that holds a part of the matrix.
struct OptimizerInfo {
  const char* name;     // the deck's optimizer.kind
  const char* summary;  // a phrase for the deck's help: "SGD with momentum"
  std::vector<std::string> states;
  std::vector<OptimizerKey> keys;
  std::vector<std::string> factored_states = {};  // {row state, column state}; empty: none
};

// One state tensor of a parameter: its suffix, its global shape, and whether it is split as the
// parameter is (else whole on every rank that holds a part of the parameter).
struct OptimizerState {
  std::string suffix;
  std::size_t rows = 0, cols = 0;
  bool like_parameter = true;
};

const OptimizerInfo& optimizer_info(OptimizerKind kind);
const char* optimizer_name(OptimizerKind kind);
// The state tensors' suffixes of `kind` for a parameter split as its shard is.
const std::vector<std::string>& optimizer_state_names(OptimizerKind kind);
// Whether `kind` keeps a rows x cols parameter's state factored (a row and a column tensor).
bool optimizer_factors(OptimizerKind kind, std::size_t rows, std::size_t cols);
// The state tensors `kind` keeps for a rows x cols parameter.
std::vector<OptimizerState> optimizer_states(OptimizerKind kind, std::size_t rows,
                                             std::size_t cols);
// The state elements `kind` keeps per element of a large weight matrix, for memory estimates: its
// state tensors' count, or 0 for a factored state (rows + cols of rows x cols).
double optimizer_states_per_weight(OptimizerKind kind);
// The optimizer named `name`; a UserError listing the valid names for any other.
OptimizerKind parse_optimizer(const std::string& name);
std::vector<std::string> optimizer_names();  // in the table's order
// Every key of every optimizer once, its doc naming the optimizers that read it
// ("adamw, lion: weight decay ..."), in the table's order.
std::vector<OptimizerKey> optimizer_deck_keys();

struct OptimizerSettings {
  OptimizerKind kind;
  double lr = 1e-3;      // peak learning rate, reached after warm-up
  double min_lr = 1e-4;  // where the cosine decay ends
  std::size_t warmup_steps = 10;
  std::size_t total_steps = 100;  // the cosine decay reaches min_lr here
  double clip_norm = 1.0;         // gradients are scaled to this global L2 norm when above; 0: off
  // The optimizer's keys set for this run (momentum, beta1, weight_decay, ...); a key not set
  // reads as its default.
  std::map<std::string, double> values;

  // The value of `key`, which must be a key of some optimizer of the table.
  double value(const std::string& key) const;
  OptimizerSettings& set(const std::string& key, double v);
};

}  // namespace meshslice
