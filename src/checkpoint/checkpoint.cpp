#include "checkpoint/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "checkpoint/shard_runs.hpp"
#include "checkpoint/tensor_file.hpp"
#include "core/broadcast_text.hpp"
#include "core/crc32.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"

namespace meshslice {
namespace {

namespace fs = std::filesystem;

const char* const kModelFile = kCheckpointModelFile;
const char* const kOptimizerFile = "optimizer.safetensors";
const char* const kTrainerFile = kCheckpointTrainerFile;
const char* const kFormat = "meshslice checkpoint";
const char* const kMasterSuffix = ".master";

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Runs `work` on rank 0 (the file system's bookkeeping); its failure is the same UserError on
// every rank.
void on_rank_zero(MPI_Comm comm, const std::function<void()>& work) {
  std::string error;
  if (rank_of(comm) == 0) {
    try {
      work();
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "failed";
    }
  }
  error = broadcast_text(comm, error);
  if (!error.empty()) throw UserError(error);
}

// One tensor of a file as this rank has it: the elements [first, first + count) of a
// shard_rows x shard_cols shard (laid out in the global tensor as `layout` says) in `data` (all
// of them are read), and whether this rank writes them. Each element has one writer: replica 0,
// mesh row 0 for the gains' copies, and with ZeRO-1 every replica for its row of the optimizer
// state (and of a bf16 run's sharded master weight); a factored optimizer state, whole on every
// rank that holds its parameter, mesh chip (0, 0) of replica 0.
template <class T>
struct Held {
  bool holds = false;  // false: this rank holds nothing of the tensor
  Matrix<T> data;
  StoredLayout layout;
  ParamShape global;
  std::size_t shard_rows = 0, shard_cols = 0;
  std::size_t first = 0, count = 0;
  bool writes = false;
  std::vector<ShardRun> runs() const {
    if (!holds) return {};
    return shard_runs(layout, global, shard_rows, shard_cols, first, count);
  }
};

// `data`, elements [first, first + its count) of a shard_rows x shard_cols shard laid in the
// `global` tensor as `layout` says, as a file tensor holds it (not yet written).
template <class T>
Held<T> held_part(const Matrix<T>& data, const StoredLayout& layout, ParamShape global,
                  std::size_t shard_rows, std::size_t shard_cols, std::size_t first) {
  Held<T> h;
  h.holds = true;
  h.data = data;
  h.layout = layout;
  h.global = global;
  h.shard_rows = shard_rows;
  h.shard_cols = shard_cols;
  h.first = first;
  h.count = elements(data);
  return h;
}

// p's shard as a file tensor holds it, its elements in `data` from `first`.
template <class T>
Held<T> shard_of(const Parameter<T>& p, const Matrix<T>& data, std::size_t first) {
  return held_part(data, p.layout, p.global, p.value.extent(0), p.value.extent(1), first);
}

// p's fp32 values as this rank keeps them (Parameter::values: the shard, or a sharded master's
// row), and whether it writes them.
template <class T>
Held<T> values_of(const Parameter<T>& p, int replica, int mesh_row) {
  Held<T> h = shard_of(p, p.values(), p.values_first());
  h.writes = p.value_counts(replica, mesh_row);
  return h;
}

// What one file holds: (name, global shape) in file order, this rank's part of each, and the
// dtype the file stores them in (T's own, or BF16 for a bf16 run's model).
template <class T>
struct FileContents {
  std::vector<std::pair<std::string, ParamShape>> tensors;
  std::vector<Held<T>> held;
  const char* dtype = dtype_for_bytes(sizeof(T));
};

// The parameters, in BF16 when `bf16` (a bf16 run's: what a reader of the model runs), in T
// otherwise.
template <class T>
FileContents<T> model_contents(const Torus& torus, const ParameterSet<T>& params, bool bf16) {
  FileContents<T> out;
  if (bf16) out.dtype = "BF16";
  out.tensors = params.model_tensors();
  const int replica = torus.coord(Axis::dp), row = torus.coord(Axis::row);
  for (const auto& [name, shape] : out.tensors) {
    const Parameter<T>* p = params.find(name);
    out.held.push_back(p ? values_of(*p, replica, row) : Held<T>());
  }
  return out;
}

// The optimizer's state under its parameters' names; with `masters`, each parameter's own values
// first (".master": a bf16 run's model file rounds them, so the exact ones resume from here).
template <class T>
FileContents<T> optimizer_contents(const Torus& torus, const ParameterSet<T>& params,
                                   const Optimizer<T>& optimizer, bool masters) {
  FileContents<T> out;
  const int replica = torus.coord(Axis::dp), row = torus.coord(Axis::row);
  const bool chip0 = replica == 0 && row == 0 && torus.coord(Axis::col) == 0;
  for (const auto& [name, shape] : params.model_tensors()) {
    if (masters) {
      out.tensors.emplace_back(name + kMasterSuffix, shape);
      const Parameter<T>* p = params.find(name);
      out.held.push_back(p ? values_of(*p, replica, row) : Held<T>());
    }
    const std::vector<OptimizerState> states =
        optimizer_states(optimizer.kind(), shape.rows, shape.cols);
    for (std::size_t s = 0; s < states.size(); ++s) {
      const OptimizerState& state = states[s];
      out.tensors.emplace_back(name + "." + state.suffix, ParamShape{state.rows, state.cols});
      Held<T> h;
      const std::size_t i = params.index_of(name);
      if (i != ParameterSet<T>::npos && state.like_parameter) {
        const Parameter<T>& p = params[i];
        const Matrix<T>& data = optimizer.state(i, s);
        h = shard_of(p, data, p.sharded() ? p.dp_row * elements(data) : 0);
        h.writes = p.update_counts(replica, row);
      } else if (i != ParameterSet<T>::npos) {  // whole on this rank
        h = held_part(optimizer.state(i, s), StoredLayout{}, {state.rows, state.cols}, state.rows,
                      state.cols, 0);
        h.writes = chip0;
      }
      out.held.push_back(h);
    }
  }
  return out;
}

template <class T>
SafetensorsLayout file_layout(const FileContents<T>& contents, std::size_t step) {
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [name, shape] : contents.tensors)
    tensors.push_back({name, contents.dtype, {shape.rows, shape.cols}});
  return safetensors_layout(std::move(tensors),
                            {{"format", "meshslice"}, {"step", std::to_string(step)}});
}

// Writes a file; returns its CRC-32 and size.
template <class T>
std::pair<std::uint32_t, std::uint64_t> write_file(const std::string& path, MPI_Comm comm,
                                                   const FileContents<T>& contents,
                                                   std::size_t step) {
  TensorFileWriter out(comm, path, file_layout(contents, step));
  const bool bf16 = std::string(contents.dtype) == "BF16";
  for (std::size_t i = 0; i < contents.held.size(); ++i) {
    const Held<T>& h = contents.held[i];
    if (!h.writes) {
      out.write(i, {}, nullptr);
      continue;
    }
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.data);
    out.write(i, h.runs(), [&](const std::vector<ShardRun>& part, void* to) {
      if (bf16)
        stage(part, host.data(), static_cast<bfloat16*>(to));
      else
        stage(part, host.data(), static_cast<T*>(to));
    });
  }
  const std::uint32_t crc = out.finish();
  return {crc, out.layout().file_bytes};
}

// Reads each tensor of `contents` into what this rank holds of it, from the file's dtype
// (F32, F64 or BF16, whatever this run's T).
template <class T>
void read_tensors(TensorFileReader& in, const FileContents<T>& contents) {
  for (std::size_t i = 0; i < contents.held.size(); ++i) {
    const Held<T>& h = contents.held[i];
    const SafetensorsTensor* t = in.layout().find(contents.tensors[i].first);
    const std::size_t index = static_cast<std::size_t>(t - in.layout().tensors.data());
    if (!h.holds) {
      in.read(index, {}, nullptr);
      continue;
    }
    const auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), h.data);
    in.read(index, h.runs(), [&](const std::vector<ShardRun>& part, const void* from) {
      if (t->dtype == "F64")
        unstage(part, static_cast<const double*>(from), host.data());
      else if (t->dtype == "BF16")
        unstage(part, static_cast<const bfloat16*>(from), host.data());
      else
        unstage(part, static_cast<const float*>(from), host.data());
    });
    Kokkos::deep_copy(h.data, host);
  }
}

template <class T>
void read_file(const std::string& path, MPI_Comm comm, const FileContents<T>& contents,
               const json::Value& record) {
  TensorFileReader in(comm, path);
  const SafetensorsLayout& layout = in.layout();
  for (const auto& [name, shape] : contents.tensors) {  // the same checks on every rank
    const SafetensorsTensor* t = layout.find(name);
    require(t != nullptr, path, " has no tensor ", name, ", which this model has");
    require(t->shape == std::vector<std::uint64_t>{shape.rows, shape.cols}, path, ": tensor ", name,
            " is not ", shape.rows, " x ", shape.cols);
  }
  require(layout.tensors.size() == contents.tensors.size(), path, " holds ", layout.tensors.size(),
          " tensors, this model ", contents.tensors.size());
  read_tensors(in, contents);
  const std::uint32_t crc = in.finish();
  const std::string recorded = record.at("crc32").as_string();
  require(crc32_hex(crc) == recorded, path, " fails its CRC-32 check (trainer.json records ",
          recorded, ", the file gives ", crc32_hex(crc),
          "): the file is damaged; resume from another checkpoint");
}


std::string trainer_json(
    const CheckpointFacts& f,
    const std::map<std::string, std::pair<std::uint32_t, std::uint64_t>>& files) {
  json::Value root = json::Value::object();
  root.set("format", kFormat);
  root.set("format_version", 1);
  root.set("step", f.step);
  root.set("learning_rate", f.lr);
  root.set("next_train_input_stream", train_input_stream(f.step));
  root.set("precision", f.precision);
  // A bf16 run's model file holds its parameters rounded; the optimizer's file the exact ones.
  if (f.precision == "bf16") root.set("master_weights", kOptimizerFile);
  root.set("model", f.model);
  root.set("optimizer", optimizer_name(f.optimizer));
  json::Value seeds = json::Value::object();
  seeds.set("student", f.seeds.student);
  seeds.set("teacher", f.seeds.teacher);
  seeds.set("data", f.seeds.data);
  root.set("seeds", seeds);
  json::Value data = json::Value::object();
  data.set("seq_len", f.data.seq_len);
  data.set("global_sequences", f.data.global_sequences);
  data.set("dataset", f.data.dataset);
  data.set("held_out", f.data.held_out);
  root.set("data_stream", data);
  root.set("layout", f.layout);
  json::Value list = json::Value::object();
  for (const auto& [name, facts] : files) {
    json::Value file = json::Value::object();
    file.set("bytes", facts.second);
    file.set("crc32", crc32_hex(facts.first));
    list.set(name, file);
  }
  root.set("files", list);
  root.set("build", version_json());
  root.set("deck", f.deck);
  return root.dump(2) + "\n";
}

// The step of a directory named step-NNNNNNN (or step-NNNNNNN.partial); false for others.
bool step_of(const std::string& name, std::size_t& step, bool& partial) {
  const std::string prefix = "step-", suffix = ".partial";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string digits = name.substr(prefix.size());
  partial = digits.size() > suffix.size() &&
            digits.compare(digits.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (partial) digits.resize(digits.size() - suffix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  step = std::stoul(digits);
  return true;
}

// A step-NNNNNNN directory under a checkpoint directory, complete or not.
struct SavedStep {
  std::size_t step = 0;
  fs::path path;
  bool partial = false;  // named .partial: a save that did not finish
  bool complete() const { return !partial && fs::exists(path / kTrainerFile); }
};

// Every step directory under dir, oldest first; none when dir does not exist.
std::vector<SavedStep> saved_steps(const fs::path& dir) {
  std::vector<SavedStep> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    SavedStep s;
    s.path = entry.path();
    if (entry.is_directory() && step_of(s.path.filename().string(), s.step, s.partial))
      out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const SavedStep& a, const SavedStep& b) {
    return a.step != b.step ? a.step < b.step : a.path < b.path;
  });
  return out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(concat("cannot read ", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw std::runtime_error(concat("cannot read ", path.string()));
  return text.str();
}

// A checkpoint's trainer.json against the run: the model's shape (the model's word) and the task
// must be the same.
void check_fits(const std::string& path, const json::Value& root, const CheckpointFacts& run,
                const ModelFits& fits) {
  require(root.at("format").as_string() == kFormat && root.at("format_version").as_uint() == 1,
          path, "/trainer.json is not a meshslice checkpoint of format version 1");
  fits(path, root.at("model"));
  const std::string optimizer = root.at("optimizer").as_string();
  require(optimizer == optimizer_name(run.optimizer), "checkpoint ", path,
          " holds the state of "
          "optimizer.kind = ",
          optimizer, ", the deck asks for ", optimizer_name(run.optimizer),
          " (set optimizer.kind to ", optimizer, ", or start afresh without --resume)");
  const json::Value& seeds = root.at("seeds");
  const auto same_seed = [&](const char* key, const char* deck_key, std::uint64_t now) {
    const std::uint64_t saved = seeds.at(key).as_uint();
    require(saved == now, "checkpoint ", path, " trained on the task of train.", deck_key, " = ",
            saved, ", the deck has ", now, ": another task (set train.", deck_key, " to ", saved,
            ")");
  };
  same_seed("teacher", "seed_teacher", run.seeds.teacher);
  same_seed("data", "seed_data", run.seeds.data);
}

// A log line for each setting of the data stream that differs from the saved run's (checkpoints
// of an earlier format record none).
void note_data_stream(const std::string& path, const json::Value& root, const DataStream& run) {
  const json::Value* saved = root.find("data_stream");
  if (saved == nullptr) return;
  const auto differs = [&](const char* what, const std::string& then, const std::string& now) {
    if (then != now)
      log_info("resuming ", path, " with ", what, " = ", now, " where it was saved with ", then,
               ": the steps from here see other sequences than the saved run would have");
  };
  differs("model.seq_len", concat(saved->at("seq_len").as_uint()), concat(run.seq_len));
  differs("a global batch (model.sequences x mesh.dp)",
          concat(saved->at("global_sequences").as_uint()), concat(run.global_sequences));
  differs("data.prefix", saved->at("dataset").as_string(), run.dataset);
  differs("data.held_out", concat(saved->at("held_out").as_number()), concat(run.held_out));
}

}  // namespace

std::string checkpoint_name(std::size_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%07zu", step);
  return name;
}

template <class T>
std::string save_checkpoint(const std::string& dir, std::size_t keep, const Torus& torus,
                            const ParameterSet<T>& params, const Optimizer<T>& optimizer,
                            const CheckpointFacts& facts) {
  const MPI_Comm comm = torus.comm();
  const fs::path final_path = fs::path(dir) / checkpoint_name(facts.step);
  const fs::path partial = fs::path(dir) / (checkpoint_name(facts.step) + ".partial");
  on_rank_zero(comm, [&] {
    std::error_code error;
    fs::create_directories(dir, error);
    if (!fs::is_directory(dir))
      throw std::runtime_error(concat("cannot make the checkpoint directory ", dir, ": ",
                                      error ? error.message() : "a file of that name exists"));
    fs::remove_all(partial);  // a save of this step that did not finish
    if (!fs::create_directory(partial, error) || error)
      throw std::runtime_error(concat("cannot make ", partial.string(), ": ", error.message()));
  });
  std::map<std::string, std::pair<std::uint32_t, std::uint64_t>> files;
  const bool bf16 = facts.precision == "bf16";
  files[kModelFile] = write_file((partial / kModelFile).string(), comm,
                                 model_contents(torus, params, bf16), facts.step);
  files[kOptimizerFile] =
      write_file((partial / kOptimizerFile).string(), comm,
                 optimizer_contents(torus, params, optimizer, bf16), facts.step);
  on_rank_zero(comm, [&] {
    write_output_file((partial / kTrainerFile).string(), trainer_json(facts, files));
    const fs::path old = fs::path(dir) / (checkpoint_name(facts.step) + ".old");
    fs::remove_all(old);
    if (fs::exists(final_path)) fs::rename(final_path, old);  // a save of the same step again
    fs::rename(partial, final_path);
    fs::remove_all(old);
    const fs::path link = fs::path(dir) / "latest", staged = fs::path(dir) / "latest.partial";
    fs::remove(staged);
    fs::create_directory_symlink(final_path.filename(), staged);
    fs::rename(staged, link);  // atomic: `latest` always names a complete checkpoint
    std::vector<fs::path> complete;
    for (const SavedStep& saved : saved_steps(dir))
      if (saved.complete()) complete.push_back(saved.path);
    for (std::size_t i = 0; keep > 0 && i + keep < complete.size(); ++i)
      fs::remove_all(complete[i]);
  });
  return final_path.string();
}

std::string find_checkpoint(const std::string& request, const std::string& dir, MPI_Comm comm) {
  std::string found;
  on_rank_zero(comm, [&] {
    if (request != "auto") {
      const fs::path path(request);
      std::size_t step = 0;
      bool partial = false;
      require(fs::exists(path), "--resume ", request, ": no such checkpoint directory");
      require(fs::is_directory(path), "--resume ", request,
              " is a file; a checkpoint is a "
              "directory holding trainer.json (e.g. OUT/checkpoints/latest)");
      require(!(step_of(path.filename().string(), step, partial) && partial), "--resume ", request,
              " is an incomplete save (.partial): resume from a complete checkpoint "
              "or --resume auto");
      require(fs::exists(path / kTrainerFile), "--resume ", request,
              " has no trainer.json: "
              "not a complete checkpoint (its save did not finish)");
      found = path.string();
      return;
    }
    const std::vector<SavedStep> saved = saved_steps(dir);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {  // the newest first
      if (it->complete()) {
        found = it->path.string();
        return;
      }
      log_info("warning: --resume auto passes over ", it->path.string(), " (",
               it->partial ? "an incomplete save" : "no trainer.json", ")");
    }
  });
  return broadcast_text(comm, found);
}

template <class T>
CheckpointFacts load_checkpoint(const std::string& path, const Torus& torus,
                                const ParameterSet<T>& params, const Optimizer<T>& optimizer,
                                const CheckpointFacts& run, const ModelFits& fits) {
  const MPI_Comm comm = torus.comm();
  std::string text;
  on_rank_zero(comm, [&] { text = read_text(fs::path(path) / kTrainerFile); });
  text = broadcast_text(comm, text);
  json::Value root;
  CheckpointFacts saved = run;
  try {
    root = json::parse(text);
    check_fits(path, root, run, fits);
    saved.model = root.at("model");
    note_data_stream(path, root, run.data);
    saved.step = root.at("step").as_uint();
    saved.lr = root.at("learning_rate").as_number();
    saved.precision = root.at("precision").as_string();
    saved.layout = root.at("layout").as_string();
    root.at("files").at(kModelFile).at("crc32").as_string();
    root.at("files").at(kOptimizerFile).at("crc32").as_string();
  } catch (const json::Error& e) {
    throw UserError(concat(path, "/trainer.json: ", e.what()));
  }
  if (saved.precision != run.precision)
    log_info("checkpoint ", path, " was saved with train.precision = ", saved.precision,
             "; read into this run's ", run.precision);
  const json::Value& files = root.at("files");
  // The model file first: where the optimizer's file holds master weights, they replace its
  // rounded values.
  const bool masters = root.find("master_weights") != nullptr;
  read_file((fs::path(path) / kModelFile).string(), comm, model_contents(torus, params, false),
            files.at(kModelFile));
  read_file((fs::path(path) / kOptimizerFile).string(), comm,
            optimizer_contents(torus, params, optimizer, masters), files.at(kOptimizerFile));
  return saved;
}

template std::string save_checkpoint(const std::string&, std::size_t, const Torus&,
                                     const ParameterSet<float>&, const Optimizer<float>&,
                                     const CheckpointFacts&);
template std::string save_checkpoint(const std::string&, std::size_t, const Torus&,
                                     const ParameterSet<double>&, const Optimizer<double>&,
                                     const CheckpointFacts&);
template CheckpointFacts load_checkpoint(const std::string&, const Torus&,
                                         const ParameterSet<float>&, const Optimizer<float>&,
                                         const CheckpointFacts&, const ModelFits&);
template CheckpointFacts load_checkpoint(const std::string&, const Torus&,
                                         const ParameterSet<double>&, const Optimizer<double>&,
                                         const CheckpointFacts&, const ModelFits&);

}  // namespace meshslice
