#include "train_checkpoints.hpp"

#include <mpi.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/deck.hpp"
#include "core/log.hpp"
#include "model/model_shape_record.hpp"
#include "pipeline/pipeline_schedule.hpp"

namespace meshslice::train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void note_stop_signal(int signal) { g_stop_signal = signal; }

// The bytes of a checkpoint's tensor files (rank 0 reports them; 0 where it cannot see them).
double tensor_bytes(const std::string& checkpoint) {
  std::error_code error;
  double bytes = 0;
  for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
    const auto size = std::filesystem::file_size(checkpoint + "/" + file, error);
    if (!error) bytes += static_cast<double>(size);
  }
  return bytes;
}

// "in 0.41 s (302 MB, 0.74 GB/s)"
std::string timing(std::chrono::steady_clock::time_point start, double bytes) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return concat("in ", seconds, " s (", bytes / 1e6, " MB, ", bytes / seconds / 1e9, " GB/s)");
}

// The rows of a train.csv for steps 1 .. `steps` (the header left out); none without the file.
std::vector<std::string> rows_up_to(const std::string& path, std::size_t steps) {
  std::vector<std::string> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    try {
      if (std::stoul(line.substr(0, line.find(','))) <= steps) rows.push_back(line);
    } catch (const std::exception&) {
      // not a row of ours: left out
    }
  }
  return rows;
}

}  // namespace

TrainCheckpoints::TrainCheckpoints(const AppContext& context, const Settings& settings,
                                   const Torus& torus)
    : settings_(settings),
      torus_(torus),
      deck_(deck_yaml_text(context.deck)),
      out_dir_(context.out_dir) {
  struct sigaction action {};
  action.sa_handler = note_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

CheckpointFacts TrainCheckpoints::facts(std::size_t step, double lr) const {
  const Settings& s = settings_;
  CheckpointFacts f;
  f.step = step;
  f.model = model_shape_json(s.model);
  f.precision = s.precision;
  f.optimizer = s.optimizer.kind;
  f.seeds = s.seeds;
  f.data.seq_len = s.model.seq_len;
  f.data.global_sequences = s.model.sequences * static_cast<std::size_t>(s.mesh.dp);
  if (s.lm) {
    f.data.dataset = std::filesystem::weakly_canonical(s.data.prefix).string();
    f.data.held_out = s.data.held_out;
  }
  f.lr = lr;
  f.layout = concat(s.mesh.str(), ", ", schedule_name(s.step.schedule), " x ", s.step.micro_batches,
                    " micro-batches", s.step.zero ? ", ZeRO-1" : "", ", plan ", s.plan_source);
  f.deck = deck_;
  return f;
}

template <class T>
std::size_t TrainCheckpoints::resume(const ParameterSet<T>& params, const Optimizer<T>& optimizer) {
  const std::string& request = settings_.checkpoint.resume;
  if (request.empty()) return 0;
  const std::string path = find_checkpoint(request, settings_.checkpoint.dir, torus_.comm());
  if (path.empty()) {
    log_info("--resume auto: no checkpoint under ", settings_.checkpoint.dir, "; a fresh start");
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto fits = [&](const std::string& at, const json::Value& record) {
    require_resumable(at, record, settings_.model);
  };
  const CheckpointFacts saved = load_checkpoint(path, torus_, params, optimizer, facts(0, 0), fits);
  require(saved.step <= settings_.steps, "checkpoint ", path, " has done ", saved.step,
          " steps, more than train.steps = ", settings_.steps, ": raise train.steps to train on");
  log_info("resumed from ", path, " (step ", saved.step, ", saved on ", saved.layout, ") ",
           timing(start, tensor_bytes(path)));
  earlier_rows_ = rows_up_to(out_dir_ + "/train.csv", saved.step);
  return saved.step;
}

template <class T>
bool TrainCheckpoints::after_step(std::size_t step, double lr, const ParameterSet<T>& params,
                                  const Optimizer<T>& optimizer) {
  int signal = g_stop_signal;  // the same decision on every rank
  MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, torus_.comm());
  const CheckpointSettings& c = settings_.checkpoint;
  const bool last = step == settings_.steps;
  const bool due = (c.every > 0 && step % c.every == 0) || (last && c.at_end);
  stopped_ = signal != 0 && !last;
  last_save_seconds_ = 0;
  if (due || stopped_) {
    const auto start = std::chrono::steady_clock::now();
    const std::string path =
        save_checkpoint(c.dir, c.keep, torus_, params, optimizer, facts(step, lr));
    log_info("checkpoint ", path, " saved ", timing(start, tensor_bytes(path)));
    last_save_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (stopped_)
    log_info("stopped by signal ", signal, " after step ", step, " of ", settings_.steps,
             "; the run goes on with --resume auto (exit status ", kExitResumable, ")");
  return stopped_;
}

template std::size_t TrainCheckpoints::resume(const ParameterSet<float>&, const Optimizer<float>&);
template std::size_t TrainCheckpoints::resume(const ParameterSet<double>&,
                                              const Optimizer<double>&);
template bool TrainCheckpoints::after_step(std::size_t, double, const ParameterSet<float>&,
                                           const Optimizer<float>&);
template bool TrainCheckpoints::after_step(std::size_t, double, const ParameterSet<double>&,
                                           const Optimizer<double>&);

}  // namespace meshslice::train
