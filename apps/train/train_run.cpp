#include "train_run.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "core/blas_kernels.hpp"
#include "core/deck.hpp"
#include "core/device_work_counter.hpp"
#include "core/json.hpp"
#include "core/kokkos_compat.hpp"
#include "core/log.hpp"
#include "core/memory_check.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"
#include "gemm/local_gemm_rate.hpp"
#include "data/byte_tokens.hpp"
#include "data/token_samples.hpp"
#include "gemm_rates.hpp"
#include "model/counter_random.hpp"
#include "model/trainer.hpp"
#include "nonfinite_guard.hpp"
#include "run_clock.hpp"
#include "train_checkpoints.hpp"
#include "train_emulate_only.hpp"
#include "train_emulated.hpp"
#include "train_records.hpp"
#include "train_report.hpp"
#include "train_settings.hpp"

namespace meshslice::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The step's dense GEMM FLOPs over the whole job: every block on every replica, and a language
// model's head (T x H by H x V_p, forward and both backward GEMMs).
double step_flops(const ModelShape& m, int replicas, std::size_t padded_vocab) {
  const double head = 6.0 * static_cast<double>(m.tokens()) * static_cast<double>(m.hidden) *
                      static_cast<double>(padded_vocab);
  return replicas * (static_cast<double>(m.blocks) * block_flops(m) + head);
}

// task lm: the dataset every rank maps (each reads only its own sequences).
std::unique_ptr<data::TokenSamples> token_samples(const Settings& s) {
  if (!s.lm) return nullptr;
  auto samples = std::make_unique<data::TokenSamples>(
      data::IndexedDataset(s.data.prefix, static_cast<std::int64_t>(s.model.vocab)),
      data::SampleSettings{static_cast<std::int64_t>(s.model.seq_len), s.data.held_out,
                           s.seeds.data});
  log_info("data ", s.data.prefix, ": ", samples->documents(data::Split::train).size(),
           " documents (", samples->tokens(data::Split::train), " tokens, ",
           samples->samples(data::Split::train), " sequences of ", s.model.seq_len + 1,
           ") for training, ", samples->documents(data::Split::held_out).size(), " (",
           samples->tokens(data::Split::held_out), " tokens) held out");
  return samples;
}

// task lm with train.sample_every: the model's continuation of the prompt, logged and returned.
template <class Trainer>
std::string print_sample(const Settings& s, Trainer& trainer, std::size_t step) {
  std::vector<int> prompt = data::byte_tokens(s.sample_prompt);
  prompt.pop_back();  // no end of document
  TokenSampling sampling = s.sampling;
  sampling.seed = mix64(sampling.seed ^ mix64(step));  // other draws at each step
  const std::vector<int> made = trainer.generate(prompt, s.sample_tokens, sampling);
  const std::string sample =
      concat("\"", data::printable_bytes(prompt), "\" -> \"", data::printable_bytes(made), "\"");
  log_info("sample at step ", step, ": ", sample);
  return sample;
}

// A language model's loss (nats per token) as bits per byte (or token) and perplexity.
std::string lm_figures(const Settings& s, double loss) {
  if (!s.lm) return "";
  return concat(" (", loss / std::log(2.0), s.data.byte_level ? " bits/byte" : " bits/token",
                ", ppl ", std::exp(loss), ")");
}

// A language model's loss in bits per byte (or token), the TensorBoard tag it goes under.
std::string bits_tag(const Settings& s, const char* prefix) {
  return concat(prefix, s.data.byte_level ? "bits_per_byte" : "bits_per_token");
}

// A count per name as a JSON object (summary.json's device work by kernel or fence).
template <class Number>
json::Value counts_json(const std::map<std::string, Number>& counts) {
  json::Value object = json::Value::object();
  for (const auto& [name, count] : counts) object.set(name, count);
  return object;
}

double high_water_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

// The run on executor `ex` (the real one, or in hardware mode the combined one, with
// `emulated` its bookkeeping); `trace` records every step of it.
template <class Exec>
int train_on(AppContext& context, const Settings& s, Exec& ex,
             RealExecutor<typename Exec::Scalar>& data_ex, Trace& trace, EmulatedSteps* emulated) {
  using T = typename Exec::Scalar;
  RunClock clock(s);  // start-up counts from here
  const Torus& torus = ex.torus();
  Trace kept;
  const ModelPlan plan = model_plan(s);
  print_plan(s, plan);
  const double rss_before = high_water_mib();
  const ModelShape micro = s.step.micro_batch_shape(s.model);
  // The FC layers' GEMM shape, at the run's GEMM precision.
  const std::size_t m = micro.tokens() / s.mesh.rows, n = s.model.ffn() / s.mesh.cols;
  // Every rank times each repetition while the others time theirs (local_gemm_rate.hpp).
  const RepetitionSync together = [&] { MPI_Barrier(torus.comm()); };
  const std::size_t k = s.model.hidden;
  constexpr int kRepetitions = 7;
  const auto local_peak = [&] {
    return s.precision == "bf16" ? local_gemm_rate_bf16(ex.compute_space(), fastest_bf16_route(), m,
                                                        n, k, kRepetitions, together)
           : s.precision == "tf32"
               ? local_gemm_rate_tf32(ex.compute_space(), m, n, k, kRepetitions, together)
               : local_gemm_rate<T>(ex.compute_space(), m, n, k, kRepetitions, together);
  };
  GemmRates rates;
  rates.start_up = local_peak();
  const double peak = rates.start_up;  // the steps' progress lines; the ideal takes the best
  const int ranks = torus.shape().total();
  log_info("local GEMM peak: ", peak / 1e9, " GFLOP/s per rank (", ranks,
           " ranks: ", ranks * peak / 1e9, " GFLOP/s)");
  StepSettings step_settings = s.step;
  step_settings.flop_rate = peak;  // the stage split's estimate
  const std::unique_ptr<data::TokenSamples> samples = token_samples(s);
  Trainer<Exec> trainer(ex, s.model, plan, s.optimizer, s.seeds, step_settings, &data_ex,
                        samples.get());
  print_pipeline(s, trainer.split());
  const MemoryUse memory = trainer.memory();
  print_memory(memory);
  TrainCheckpoints checkpoints(context, s, torus);
  NonfiniteGuard nonfinite(s);
  const auto& params = trainer.student().parameters();
  const auto& optimizer_state = trainer.student().optimizer();
  const std::size_t resumed = checkpoints.resume(params, optimizer_state);
  trainer.resume_at(resumed);
  const std::size_t steps_run = s.steps - resumed;
  if (steps_run == 0) {
    log_info("the checkpoint has done all train.steps = ", s.steps, ": nothing left to train");
    return 0;
  }

  const bool writer = context.rank == 0;
  std::unique_ptr<TrainRecords> records;
  if (writer)
    records = std::make_unique<TrainRecords>(
        s, context.out_dir, resumed, checkpoints.earlier_rows(), deck_yaml_text(context.deck));
  const double flops = step_flops(s.model, s.mesh.dp, s.lm ? trainer.student().vocab().padded : 0);
  const double tokens = static_cast<double>(s.model.tokens() * s.mesh.dp);
  const auto first_eval_start = Clock::now();
  double first_loss = 0, last_loss = 0, first_eval = trainer.eval_loss(s.eval_batches),
         last_eval = 0;
  clock.add(RunClock::Phase::evaluation, seconds_since(first_eval_start));
  log_info("step ", resumed, ": eval loss ", first_eval, lm_figures(s, first_eval));
  // A resumed run's events at its step are the saved run's, kept.
  const bool record_start = records && resumed == 0;
  if (record_start && s.lm) records->scalar(bits_tag(s, "eval_"), 0, first_eval / std::log(2.0));
  if (s.sample_every > 0) {
    const std::string sample = print_sample(s, trainer, resumed);
    if (record_start) records->text("sample", 0, sample);
  }
  clock.begin_steps();
  double total_seconds = 0, best_seconds = 1e30, total_exposed = 0, total_bubble = 0;
  double best_step_bubble = 0;  // of the fastest step, the least disturbed by other work
  std::size_t relayouts_before = 0;
  DeviceWork busiest_step;  // the step that launched the most (kernels and BLAS calls)
  DeviceWork fastest_step;  // the best step's, for where the time went (the first step warms up)
  // The step that allocated the most Kokkos memory (the plans made every buffer: none should).
  DeviceWork most_allocating_step;
  std::size_t most_allocating_step_number = 0;
  for (std::size_t step = resumed + 1; step <= s.steps; ++step) {
    // The batch is made before the step starts (on every stage, as a data loader would have
    // it ready), so the teacher on the last stage does not hold the pipeline up.
    const auto iteration_start = Clock::now();
    const bool past_warm_up = step > resumed + 1 || steps_run == 1;  // the first warms up
    trainer.prepare_step();
    MPI_Barrier(torus.comm());
    trace.clear();
    const auto start = Clock::now();
    const double trace_start = trace.now();
    if (emulated) emulated->begin_step(torus.comm());
    const DeviceWork work_before = device_work();
    const double blas_flops_before = ex.real().blas_flops();
    const double blas_seconds_before = ex.real().blas_seconds();
    const auto r = trainer.step();
    const DeviceWork work = device_work() - work_before;
    if (past_warm_up)
      rates.add_step(ex.real().blas_flops() - blas_flops_before,
                     ex.real().blas_seconds() - blas_seconds_before);
    if (work.launches_and_blas() > busiest_step.launches_and_blas()) busiest_step = work;
    if (work.allocations > most_allocating_step.allocations) {
      most_allocating_step = work;
      most_allocating_step_number = step;
    }
    MPI_Barrier(torus.comm());
    nonfinite.after(step, r, trainer);
    // The pipeline's bubble: of its span (the common start to the last stage's last message),
    // the share the stages were not working, averaged (each stage's work is its run less its
    // waits for the neighbours).
    double span = r.pipeline_seconds, busy = r.pipeline_seconds - r.pipeline_wait_seconds;
    MPI_Allreduce(MPI_IN_PLACE, &span, 1, MPI_DOUBLE, MPI_MAX, torus.comm());
    MPI_Allreduce(MPI_IN_PLACE, &busy, 1, MPI_DOUBLE, MPI_SUM, torus.comm());
    const double bubble = span > 0 ? 1 - busy / ranks / span : 0;
    if (past_warm_up) total_bubble += bubble;
    EmulatedSteps::Step emulated_step;
    if (emulated)
      emulated_step = emulated->end_step(torus.comm(), step, s.trace_steps.count(step) > 0);
    // The step's time without making the batch (the teacher's forward pass is the synthetic
    // task's data pipeline, as a data loader would be elsewhere); both go to train.csv.
    const double seconds = seconds_since(start);
    total_seconds += seconds;
    // Communication in flight while no computation ran, as a share of the step.
    const double exposed = summarize_overlap(trace.events()).exposed / seconds;
    total_exposed += exposed;
    if (s.trace_steps.count(step)) {
      for (const TraceEvent& e : trace.events()) kept.add(e);
      kept.add(TraceEvent{concat("step ", step), TraceLane::phase, trace_start, trace.now()});
    }
    if (past_warm_up && seconds < best_seconds) {
      best_seconds = seconds;
      best_step_bubble = bubble;
      fastest_step = work;
    }
    if (step == resumed + 1) first_loss = r.loss;
    last_loss = r.loss;
    const std::size_t relayouts = trainer.student().relayouts().count - relayouts_before;
    relayouts_before = trainer.student().relayouts().count;
    clock.add(RunClock::Phase::training, seconds_since(iteration_start));
    const bool eval = step == s.steps || (s.eval_every > 0 && step % s.eval_every == 0);
    const auto eval_start = Clock::now();
    const double eval_loss = eval ? trainer.eval_loss(s.eval_batches) : 0;
    if (eval) {
      last_eval = eval_loss;
      clock.add(RunClock::Phase::evaluation, seconds_since(eval_start));
    }
    const double gflops = flops / seconds / 1e9, fraction = flops / seconds / (ranks * peak);
    if (step == resumed + 1 || step == s.steps || step % s.log_every == 0 || eval)
      log_info("step ", step, "/", s.steps, "  loss ", r.loss, lm_figures(s, r.loss),
               eval ? concat("  eval ", eval_loss, lm_figures(s, eval_loss)) : std::string(), "  ",
               seconds * 1e3, " ms (+", r.data_seconds * 1e3, " ms batch)  ",
               static_cast<long>(tokens / seconds), " tokens/s  ", gflops, " GFLOP/s (",
               static_cast<int>(100 * fraction), "% of peak)  comm exposed ",
               static_cast<int>(std::lround(100 * exposed)), "%",
               s.mesh.pp > 1 ? concat("  bubble ", static_cast<int>(std::lround(100 * bubble)), "%")
                             : std::string(),
               "  |g| ", r.grad_norm, "  lr ", r.lr, r.nonfinite ? "  (update skipped)" : "",
               emulated ? emulated->progress(emulated_step) : std::string(),
               step < s.steps ? concat("  time left ", format_duration(clock.seconds_left(step)))
                              : std::string());
    const auto records_start = Clock::now();
    if (records) {
      // The emulated columns are empty without hardware mode. (Cells spelled out: nvcc's front
      // end rejects std::optional's deduction guide in this braced list.)
      using Cell = std::optional<double>;
      const auto if_emulated = [&](double v) { return emulated ? Cell(v) : Cell(); };
      const RecordValues values{r.loss,
                                eval ? Cell(eval_loss) : Cell(),
                                r.grad_norm,
                                r.lr,
                                seconds,
                                r.data_seconds,
                                tokens / seconds,
                                gflops,
                                fraction,
                                exposed,
                                static_cast<double>(relayouts),
                                bubble,
                                if_emulated(emulated_step.seconds),
                                if_emulated(emulated_step.exposed_fraction),
                                if_emulated(emulated_step.flop_utilization),
                                r.nonfinite ? 1.0 : 0.0};
      records->row(step, values);
      if (s.lm) records->scalar(bits_tag(s, ""), step, r.loss / std::log(2.0));
      if (s.lm && eval) records->scalar(bits_tag(s, "eval_"), step, eval_loss / std::log(2.0));
      records->scalar("memory_high_water_mib", step, high_water_mib());
      if (eval) records->evaluated();
    }
    clock.add(RunClock::Phase::records, seconds_since(records_start));
    if (s.sample_every > 0 && (step % s.sample_every == 0 || step == s.steps)) {
      const auto sample_start = Clock::now();
      const std::string sample = print_sample(s, trainer, step);
      clock.add(RunClock::Phase::evaluation, seconds_since(sample_start), /*another=*/!eval);
      if (records) records->text("sample", step, sample);
    }
    const bool stop = checkpoints.after_step(step, r.lr, params, optimizer_state);
    if (checkpoints.last_save_seconds() > 0)
      clock.add(RunClock::Phase::checkpoints, checkpoints.last_save_seconds());
    if (stop) {
      if (records) records->finish();
      log_info(clock.summary());
      return checkpoints.exit_status();
    }
  }
  if (!s.trace_steps.empty()) {
    write_chrome_trace(kept, context.out_dir + "/trace.json", torus.comm());
    log_info("trace of ", s.trace_steps.size(), " step(s) written to ", context.out_dir,
             "/trace.json (open in https://ui.perfetto.dev)");
    if (emulated) {
      emulated->write_trace(context.out_dir + "/trace_emulated.json", torus.comm());
      log_info("the same steps on the emulated ", emulated->machine_name(), ": ", context.out_dir,
               "/trace_emulated.json");
    }
  }
  const double rss = high_water_mib();
  // The saved activations of the rank that keeps the most (pipeline stages differ).
  double activations_max = static_cast<double>(memory.activations);
  MPI_Allreduce(MPI_IN_PLACE, &activations_max, 1, MPI_DOUBLE, MPI_MAX, torus.comm());
  double rss_max = rss;
  MPI_Allreduce(MPI_IN_PLACE, &rss_max, 1, MPI_DOUBLE, MPI_MAX, torus.comm());
  log_info("train loss ", first_loss, " -> ", last_loss, " (", first_loss / last_loss,
           "x), eval loss ", first_eval, " -> ", last_eval, " (", first_eval / last_eval, "x)",
           lm_figures(s, last_eval));
  // The ideal step: its dense GEMM FLOPs at every rank's local GEMM peak, the best rate
  // measured (gemm_rates.hpp).
  rates.end = local_peak();
  rates.agree(torus.comm());
  const double best_peak = rates.best();
  const double ideal_seconds = flops / (ranks * best_peak);
  log_info("best step ", best_seconds * 1e3, " ms: ", static_cast<long>(tokens / best_seconds),
           " tokens/s, ", flops / best_seconds / 1e9, " GFLOP/s, ",
           100 * flops / best_seconds / (ranks * best_peak), "% of ", ranks,
           " x the local GEMM peak (", best_seconds / ideal_seconds, "x the ideal step, ",
           ideal_seconds * 1e3, " ms; the peak ", rates.describe(), ")");
  if (emulated) log_info(emulated->closing_line(best_seconds));
  std::string fences;  // the labels that fenced most, and the global fences (a step has none)
  if (device_work_counts_fences()) {
    fences = concat("; fences most: ", busiest_names(busiest_step.fences_by_name, 5),
                    "; global fences ", busiest_step.global_fences);
    if (busiest_step.global_fences > 0)
      fences += concat(" (", busiest_names(busiest_step.global_fences_by_name, 5), ")");
  }
  log_info("device work of the busiest step on this rank: ", describe(busiest_step),
           "; most: ", busiest_names(busiest_step.by_name, 8), fences,
           "; host time of the best step most (the kernels' own where they block): ",
           busiest_names(fastest_step.seconds_by_name, 6));
  if (most_allocating_step.allocations > 0)
    log_info("step ", most_allocating_step_number, " allocated Kokkos memory ",
             most_allocating_step.allocations, " times on this rank (",
             busiest_names(most_allocating_step.allocations_by_name, 5), ")");
  log_info("re-layouts: ", trainer.student().relayouts().count, " (",
           mib(trainer.student().relayouts().bytes), " MiB sent by this rank)");
  // bf16's operand copies, sized with the executor's plans: counted here, not in the estimate.
  const double bf16_copies = static_cast<double>(ex.real().bf16_scratch_bytes());
  log_info("memory per rank: estimated ", mib(memory.total()), " MiB of model buffers",
           bf16_copies > 0 ? concat(" + ", mib(bf16_copies), " MiB of bf16 GEMM operand copies")
                           : std::string(),
           "; measured high-water mark ", rss, " MiB (process, of which ", rss_before,
           " MiB before the model was built)");
  if (records) {
    const auto records_start = Clock::now();
    records->finish();
    clock.add(RunClock::Phase::records, seconds_since(records_start), false);
    const std::string where = records->where();
    if (!where.empty()) log_info(where);
  }
  log_info(clock.summary());
  if (writer) {
    const auto figure = [](double x) { return json::Value::number_or_null(x); };
    const double steps_timed = static_cast<double>(std::max<std::size_t>(1, steps_run));
    json::Value pipeline = json::Value::object();
    pipeline.set("stages", s.mesh.pp);
    pipeline.set("schedule", schedule_name(s.step.schedule));
    pipeline.set("microbatches", s.step.micro_batches);
    pipeline.set("virtual_stages", s.step.virtual_stages);
    pipeline.set("checkpointed_blocks", s.step.checkpointed.size());
    pipeline.set("zero", s.step.zero);
    pipeline.set("mean_bubble_fraction",
                 figure(total_bubble / std::max<std::size_t>(1, steps_run - 1)));
    pipeline.set("best_step_bubble_fraction", figure(best_step_bubble));
    json::Value summary = json::Value::object();
    summary.set("mesh", s.mesh.str());
    summary.set("steps", s.steps);
    summary.set("first_loss", figure(first_loss));
    summary.set("last_loss", figure(last_loss));
    summary.set("first_eval_loss", figure(first_eval));
    summary.set("last_eval_loss", figure(last_eval));
    summary.set("resumed_from_step", resumed);
    summary.set("mean_step_seconds", figure(total_seconds / steps_timed));
    summary.set("best_step_seconds", figure(best_seconds));
    summary.set("tokens_per_second", figure(tokens / best_seconds));
    summary.set("gemm_gflops", figure(flops / best_seconds / 1e9));
    summary.set("local_gemm_peak_gflops", figure(best_peak / 1e9));
    json::Value measured = json::Value::object();  // the measures it is the best of
    measured.set("start_up", figure(rates.start_up / 1e9));
    measured.set("end", figure(rates.end / 1e9));
    measured.set("in_step", rates.in_step > 0 ? figure(rates.in_step / 1e9) : json::Value());
    summary.set("local_gemm_rates_gflops", std::move(measured));
    summary.set("blas", blas_kernels());  // "" where it is not OpenBLAS
    summary.set("peak_fraction", figure(flops / best_seconds / (ranks * best_peak)));
    summary.set("ideal_step_seconds", figure(ideal_seconds));
    summary.set("mean_exposed_comm_fraction", figure(total_exposed / steps_timed));
    summary.set("pipeline", std::move(pipeline));
    summary.set("updates_skipped", nonfinite.skipped());
    summary.set("relayouts", trainer.student().relayouts().count);
    json::Value work = json::Value::object();
    work.set("kernel_launches", busiest_step.launches);
    work.set("blas_calls", busiest_step.blas_calls);
    work.set("launches_and_blas_calls", busiest_step.launches_and_blas());
    work.set("fences",
             device_work_counts_fences() ? json::Value(busiest_step.fences) : json::Value());
    work.set("copies", busiest_step.copies);
    work.set("host_device_copies", busiest_step.host_device_copies);
    work.set("by_name", counts_json(busiest_step.by_name));
    work.set("fences_by_name", counts_json(busiest_step.fences_by_name));
    work.set("global_fences",
             device_work_counts_fences() ? json::Value(busiest_step.global_fences) : json::Value());
    work.set("global_fences_by_name", counts_json(busiest_step.global_fences_by_name));
    work.set("best_step_seconds_by_name", counts_json(fastest_step.seconds_by_name));
    // Of the step that allocated the most (any step, the first included).
    work.set("allocations", most_allocating_step.allocations);
    work.set("allocations_by_name", counts_json(most_allocating_step.allocations_by_name));
    summary.set("device_work_per_step", std::move(work));
    summary.set("memory_estimate_mib", figure(mib(memory.total())));
    summary.set("bf16_operand_copies_mib", figure(mib(bf16_copies)));
    summary.set("memory_high_water_mib", figure(rss));
    summary.set("activation_memory_mib", figure(mib(activations_max)));
    summary.set("optimizer_state_mib", figure(mib(static_cast<double>(memory.optimizer_state))));
    summary.set("memory_high_water_max_mib", figure(rss_max));
    summary.set("emulated", emulated ? emulated->json() : json::Value());
    summary.set("build", version_json());
    write_output_file(context.out_dir + "/summary.json", summary.dump(2) + "\n");
  }
  return 0;
}

template <class T>
int train(AppContext& context, const Settings& s) {
  FlightRecorder::instance().start(s.flight);
  install_device_work_counter();
  Torus torus(MPI_COMM_WORLD, s.mesh);
  // The lower bound of a stage: its share of the blocks (rounded up) on one micro-batch.
  ModelShape stage_share = s.step.micro_batch_shape(s.model);
  stage_share.blocks = (s.model.blocks + s.mesh.pp - 1) / s.mesh.pp;
  require_memory_fits(concat("the model's weights, gradients, optimizer state and saved "
                             "activations (H = ",
                             s.model.hidden, ", ", stage_share.blocks, " blocks per stage, ",
                             stage_share.tokens(), " tokens per micro-batch)"),
                      minimum_memory_bytes(stage_share, std::size_t(s.mesh.rows) * s.mesh.cols,
                                           s.optimizer.kind, sizeof(T), s.attention,
                                           s.precision == "bf16"),
                      torus.comm());
  // Every step is traced (the progress line's exposed communication comes from it); the steps
  // of train.trace_steps are kept for OUT/trace.json. The batches are made on an executor of
  // their own, untraced: the teacher's forward pass is the task's data pipeline.
  Trace trace;
  RealExecutor<T> ex(torus, s.comm, s.gemm_chunks, &trace);
  RealExecutor<T> data_ex(torus, s.comm, s.gemm_chunks);
  if (s.fail_at_collective >= 0 && context.rank == s.fail_on_rank)
    ex.fail_at_collective(static_cast<std::size_t>(s.fail_at_collective));
  if (s.precision == "bf16") {  // the trained model's GEMMs; the teacher's (the data) stay float
    const Bf16GemmRoute route = fastest_bf16_route();
    ex.round_gemm_operands_to_bf16(route);
    log_info("bf16: every GEMM of the model rounds its operands to bf16 and sums in float (",
             bf16_route_name(route), ")");
    if (route == Bf16GemmRoute::float_panels)  // bf16's bytes at float's GEMM speed
      log_info("bf16: the GEMMs run at float's speed: the onednn route needs ",
               bf16_route_needs(Bf16GemmRoute::onednn), ", the cublas route ",
               bf16_route_needs(Bf16GemmRoute::cublas));
  }
  if (s.precision == "tf32") {  // likewise: the teacher's GEMMs stay IEEE float
    ex.multiply_gemms_in_tf32();
    log_info("tf32: every GEMM of the model runs on the tensor cores in TF32 (cuBLAS)");
  }
  if (!s.machine) return train_on(context, s, ex, data_ex, trace, nullptr);
  // Hardware mode: every op of the step also goes to this rank's chip of the same mesh on the
  // emulated machine (the data pipeline does not).
  EmulatedSteps emulated(*s.machine, static_cast<double>(s.model.tokens() * s.mesh.dp));
  sim::CombinedExecutor<RealExecutor<T>> combined(ex, *s.machine, emulated.events());
  emulated.attach(combined.emulated());
  log_info("hardware mode: every step is also timed on an emulated ", emulated.machine_name(), " (",
           s.machine->machine.source, "), each rank's ops on its chip of the same mesh, at ",
           s.machine->machine.chip.element_bytes, "-byte elements (train.precision ", s.precision,
           ")");
  return train_on(context, s, combined, data_ex, trace, &emulated);
}

}  // namespace

int run_training(AppContext& context) {
  const Settings s = settings_from(context);
  if (s.emulate_only) return emulate_training(context, s);
  return s.precision == "double" ? train<double>(context, s)
                                 : train<float>(context, s);  // bf16: float
}

}  // namespace meshslice::train
