#include "train_settings.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/comm_parameters.hpp"
#include "core/deck.hpp"
#include "core/precision.hpp"
#include "exec/real_executor.hpp"
#include "mesh/mesh_parameters.hpp"
#include "model/model_shape_parameters.hpp"
#include "sim/machine_loader.hpp"

namespace meshslice::train {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-train");
  add_mesh_parameters(valid);
  add_comm_parameters(valid);
  valid.set("hardware", "none",
            "hardware mode: also time every op of each step on this emulated machine, a name "
            "under hardware/machines/ (tpuv4-sim, tpuv4-cloud) or a path; printed beside the "
            "measured step; none = off");
  auto& model = valid.sublist("model", false, "The transformer (L pre-norm blocks, no biases).");
  add_model_shape_parameters(
      model, {{"hidden", 64, ""},
              {"heads", 4, "divisible by mesh.cols (each column keeps whole heads)"},
              {"kv_heads", 0, "divisible by mesh.cols too"},
              {"blocks", 2, ""},
              {"seq_len", 32, ""},
              {"sequences", 16, "divisible by mesh.rows"},
              {"vocab", 257,
               "task lm: 257 is meshslice-data's byte tokenizer's; padded for the mesh, the "
               "padding never predicted"}});
  model.set("rope", false,
            "rotary position embeddings (RoPE) on attention's queries and keys; "
            "needs an even head size (hidden / heads)");
  model.set("tied_head", false, "task lm: the LM head is the embedding transposed (one table)");
  add_mlp_parameters(model);
  auto& data = valid.sublist("data", false,
                             "task lm: the token dataset (Megatron's indexed "
                             "format: PREFIX.bin + PREFIX.idx, e.g. from meshslice-data).");
  data.set("prefix", "", "the dataset's path without .bin / .idx");
  data.set("held_out", 0.05,
           "the share of documents held out for the evaluation loss (at least "
           "one document each way)");
  data.set("seed", 1234,
           "the seed of the held-out split and of the sequences' order "
           "(meshslice-data's --seed: its printed split is the one trained on)");
  data.set("byte_level", true,
           "one token is one byte (meshslice-data's tokenizer): the progress "
           "line says bits per byte; false: bits per token");
  auto& pipe = valid.sublist("pipeline", false,
                             "Pipeline parallelism over the mesh's pp axis, and micro-batches.");
  pipe.set("stages", 0,
           "pipeline stages: the mesh's pp axis (0 = mesh.pp; otherwise it must "
           "equal mesh.pp)");
  pipe.set("microbatches", 1,
           "micro-batches each step's batch is cut into (divides "
           "model.sequences); weight gradients accumulate over them");
  set_choice(pipe, "schedule", "1f1b", {"gpipe", "1f1b", "interleaved"},
             "gpipe: every forward, then every backward (holds all micro-batches' activations); "
             "1f1b: one forward, one backward (holds at most mesh.pp); interleaved: 1f1b over "
             "pipeline.virtual_stages model chunks per rank (a smaller bubble, microbatches a "
             "multiple of mesh.pp)");
  pipe.set("virtual_stages", 1,
           "interleaved: model chunks per rank (mesh.pp x virtual_stages "
           "<= model.blocks)");
  auto& recompute =
      valid.sublist("recompute", false, "Activation recomputation (activation checkpointing).");
  recompute.set("blocks", Teuchos::Array<std::string>(),
                "blocks whose activations are dropped after the forward pass and recomputed in "
                "the backward pass: block numbers (0-based), or 'all'; empty = none");
  auto& ckpt = valid.sublist("checkpoint", false,
                             "Training state saved to disk and resumed (model, optimizer, step).");
  ckpt.set("every", 0, "save a checkpoint every N steps; 0 = only at the end (checkpoint.at_end)");
  ckpt.set("keep", 3, "keep the newest N complete checkpoints, remove older ones; 0 = keep all");
  ckpt.set("at_end", true,
           "save a checkpoint after the last step (and when a signal stops the "
           "run: SIGTERM or SIGUSR1)");
  ckpt.set("dir", "",
           "where checkpoints go: DIR/step-NNNNNNN, DIR/latest; empty = OUT/checkpoints");
  ckpt.set("resume", "",
           "resume from this checkpoint directory, or 'auto': the newest complete "
           "one under checkpoint.dir (a fresh start when there is none); empty = start afresh. "
           "--resume PATH is short for it");
  auto& opt = valid.sublist("optimizer", false, "Optimizer, learning-rate schedule, clipping.");
  std::string kinds;
  for (std::size_t i = 0; i < optimizer_names().size(); ++i) {
    const OptimizerInfo& info = optimizer_info(OptimizerKind{i});
    kinds += concat(i ? "; " : "", info.name, ": ", info.summary);
  }
  set_choice(opt, "kind", optimizer_names().front(), optimizer_names(), kinds);
  opt.set("lr", 3e-3, "peak learning rate, reached at the end of warm-up");
  opt.set("min_lr", 1e-4, "learning rate at the end of the cosine decay (the last step)");
  opt.set("warmup_steps", 50, "linear warm-up steps");
  for (const OptimizerKey& k : optimizer_deck_keys()) opt.set(k.key, k.default_value, k.doc);
  opt.set("clip_norm", 1.0, "clip gradients to this global L2 norm; 0 = no clipping");
  opt.set("zero", false,
          "ZeRO-1: shard the optimizer state over mesh.dp (gradients "
          "reduce-scattered, each replica updates its shard, parameters all-gathered); in a bf16 "
          "run also the fp32 master weights of the weights its GEMMs read in bf16 (their bf16 "
          "copies all-gathered)");
  auto& train = valid.sublist("train", false, "The run.");
  set_choice(train, "task", "teacher", {"teacher", "lm"},
             "teacher: a fixed random model of the same shape makes the targets of random inputs "
             "(MSE loss); lm: a language model on the token dataset of data.prefix (embedding, "
             "RoPE blocks, final RMSNorm, head, cross-entropy)");
  train.set("steps", 1500, "training steps");
  train.set("sample_every", 0,
            "task lm: every N steps (and after the last) print the model's "
            "continuation of train.sample_prompt, made by the distributed forward pass; "
            "0 = never");
  train.set("sample_prompt", "The ",
            "task lm: the text the samples continue (bytes: needs "
            "data.byte_level)");
  train.set("sample_tokens", 64, "task lm: tokens each sample adds to the prompt");
  train.set("sample_temperature", 0.0,
            "task lm: 0 = each sample's token the most likely "
            "(greedy); T > 0 = drawn from softmax(logits / T), the draws a function of "
            "train.sample_seed and the step, the same on any mesh");
  train.set("sample_seed", 1, "task lm: the seed of the samples' draws (sample_temperature > 0)");
  train.set("eval_every", 250, "evaluation loss every N steps (and after the last); 0 = last only");
  train.set("eval_batches", 2, "held-out batches per evaluation");
  train.set("log_every", 100, "a progress line every N steps (and the first and last)");
  train.set("tensorboard", true,
            "write TensorBoard event files in OUT/tensorboard/ (every column of train.csv, the "
            "samples and the resolved deck; a resumed run continues them): tensorboard "
            "--logdir OUT/tensorboard");
  train.set("plot", true,
            "draw OUT/train.png (train and held-out loss and the learning rate against the "
            "step) with gnuplot at each evaluation and at the end; nothing without gnuplot");
  set_choice(train, "precision", "float", precision_names(),
             "scalar type of every tensor: float, double, or bf16: float tensors whose GEMMs (the "
             "linear layers' and the LM head's) round their operands to bf16 and sum the "
             "products in float, as PyTorch's autocast (attention, norms, optimizer and "
             "collectives stay float; checkpoints keep the model in BF16 and fp32 master "
             "weights), or tf32 (CUDA builds only): float tensors whose GEMMs run on the tensor "
             "cores in TF32, as PyTorch's allow_tf32");
  set_choice(train, "on_nonfinite", "stop", {"stop", "skip"},
             "a step whose loss or gradient norm is NaN or infinite: stop (end the run naming the "
             "step and the first parameter with a non-finite gradient, nothing applied or "
             "saved) or skip (drop that step's update and go on)");
  train.set("max_skipped", 10, "on_nonfinite skip: stop after this many skipped steps in a row");
  train.set("seed_student", 1, "seed of the trained model's initial weights");
  train.set("seed_teacher", 2, "seed of the fixed teacher that makes the targets");
  train.set("seed_data", 3, "seed of the inputs");
  train.set("emulate_only", false,
            "with hardware: emulate every op of the step without running anything (no data, no "
            "losses); one MPI rank per pipeline stage stands for its stage's chips, so the mesh "
            "may be far larger than the job (mpiexec -np <mesh.pp>)");
  train.set("gemm_chunks", 8, RealExecutor<float>::gemm_chunks_help());
  train.set("trace_steps", Teuchos::Array<int>(),
            "steps to record in OUT/trace.json, a Chrome trace (open in Perfetto) with a process "
            "per rank and lanes compute, row, col, tp, dp links and phases; empty = no trace");
  auto& debug = valid.sublist("debug", false, "Test aids: faults injected on purpose.");
  debug.set("fail_at_collective", -1,
            "the n-th collective (from 0) that rank debug.fail_on_rank starts for real throws "
            "instead, as a bug in a GEMM plan would (the job must end, not hang); -1 = off");
  debug.set("fail_on_rank", 0, "the MPI rank debug.fail_at_collective and debug.inject act on");
  set_choice(debug, "inject", "none", {"none", "skip", "wrong_size", "sleep"},
             "a fault in communication operation debug.inject_at_op of rank debug.fail_on_rank, "
             "for the tests of the watchdog: skip it, post it one element short, or sleep "
             "debug.inject_sleep_seconds before it");
  debug.set("inject_at_op", 1,
            "the rank's communication operation (from 1, as numbered in its flight recorder) "
            "debug.inject hits; a skip or a short message moves to the next non-blocking one");
  debug.set("inject_sleep_seconds", 0.0,
            "how long debug.inject: sleep sleeps; 0 = comm.timeout_seconds + 60");
  auto& plan = valid.sublist("plan", false, "How each FC layer's GEMMs run (Table 1 dataflows).");
  set_choice(plan, "source", "default", {"default", "layers", "file"},
             "default: the largest of X, W, Y stays stationary (transposed variant where it "
             "saves a re-layout), every GEMM runs plan.algorithm with plan.slices; layers: the "
             "entries of plan.layers; file: a YAML file whose `layers` key holds such entries");
  plan.set("algorithm", "meshslice",
           "default plan: algorithm of every GEMM (meshslice, "
           "collective, summa, cannon, wang)");
  plan.set("slices", 2, "default plan: S of every GEMM");
  plan.set("block", 1, "default plan: B (block size of the sliced dimension)");
  plan.set("layers",
           Teuchos::Array<std::string>(
               std::vector<std::string>{"qkv Y meshslice S=2", "attn_out Y meshslice S=2",
                                        "ff1 Y meshslice S=2", "ff2 X meshslice S=2"}),
           "source layers: one entry per FC layer, 'LAYER ROW ALGORITHM [S=n] [B=n]', ROW one of "
           "Y, X, W (stationary) with a trailing t for the transposed variant, e.g. 'ff1 Wt summa "
           "S=4'; a language model also names its head, 'lm_head Y|X ...' (X when tied)");
  plan.set("file", "", "source file: path of the plan file");
  set_choice(plan, "attention", "auto", {"auto", "fused", "blas_blocks"},
             "how each chip computes attention: fused (a few launches per layer: query tiles in "
             "scratch memory, the online softmax, each row's log-sum-exp kept), blas_blocks "
             "(BLAS GEMMs per causal row block, each a strided batch over the sequences and heads: "
             "one cuBLAS call on a GPU; the probabilities kept); auto: the backend's faster "
             "(scripts/bench-train.sh measures both)");
  return valid;
}

namespace {

// The deck sections a plan file may set besides its layers, and the keys of each it may set (none
// listed: all): meshslice-tune's planner decides the mesh, the pipeline, recomputation, ZeRO-1
// and, for the global batch it was given, the sequences per replica, together with the layers.
const std::map<std::string, std::vector<std::string>> kPlanSections = {{"mesh", {}},
                                                                       {"pipeline", {}},
                                                                       {"recompute", {}},
                                                                       {"optimizer", {"zero"}},
                                                                       {"model", {"sequences"}},
                                                                       {"train", {"precision"}}};
// The keys a plan file holds besides those sections: what it was made for, and the layers.
const std::vector<std::string> kPlanKeys = {"hidden", "heads", "kv_heads", "tokens",
                                            "mlp",    "ffn",   "layers"};
// Keys inside those sections that say what the plan was made for: checked, never set.
const std::vector<std::string> kPlanMadeFor = {"optimizer.kind", "train.precision"};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The deck with the plan file's sections applied over it (what the plan names wins), validated
// again so a plan's wrong key or type is named, its layers in plan.layers and what it was made
// for checked. The plan file is read here alone, on every rank.
Teuchos::ParameterList deck_with_plan(const Teuchos::ParameterList& deck, std::string& applied) {
  const std::string path = get_param<std::string>(deck, "plan.file");
  if (get_param<std::string>(deck, "plan.source") != "file" || path.empty()) return deck;
  std::error_code ec;
  require(std::filesystem::is_regular_file(path, ec), "plan.file = ", path,
          " is not a file; give "
          "the path of a plan file (meshslice-tune writes OUT/plan.yaml)");
  const Teuchos::ParameterList file = load_deck(path);
  Teuchos::ParameterList merged = deck;
  for (auto it = file.begin(); it != file.end(); ++it) {
    const std::string& key = file.name(it);
    const auto section_keys = kPlanSections.find(key);
    const bool section = section_keys != kPlanSections.end();
    require(key != "checkpointing", "plan file ", path,
            ": 'checkpointing' was renamed "
            "'recompute' (activation recomputation; 'checkpoint' now means saved training "
            "state): rename the section");
    require(
        section || contains(kPlanKeys, key), "plan file ", path, ": unknown key '", key,
        "'; a plan holds hidden, heads, kv_heads, tokens, mlp, ffn, layers and the sections mesh, "
        "pipeline, "
        "recompute, optimizer (zero and kind only), model (sequences only) and train (precision "
        "only)");
    if (!section) continue;
    require(file.isSublist(key), "plan file ", path, ": '", key, "' must be a section (a map)");
    const Teuchos::ParameterList& part = file.sublist(key);
    for (auto entry = part.begin(); entry != part.end(); ++entry) {
      const std::string& name = part.name(entry);
      if (contains(kPlanMadeFor, concat(key, ".", name))) continue;  // checked below
      const std::vector<std::string>& allowed = section_keys->second;
      require(allowed.empty() || contains(allowed, name), "plan file ", path, ": ", key, ".", name,
              " is a training setting, not part of a plan; a plan's ", key, " section holds only ",
              allowed.front());
      merged.sublist(key).setEntry(name, part.entry(entry));
      applied += concat(applied.empty() ? "" : ", ", key, ".", name, " = ",
                        Teuchos::toString(part.entry(entry).getAny()));
    }
  }
  try {
    validate_and_fill(merged, valid_parameters());
  } catch (const UserError& e) {
    throw UserError(concat("plan file ", path, ": ", e.what()));
  }
  // What the plan was made for, when the file says (meshslice-tune writes it): a plan for
  // another model is refused rather than silently run.
  const auto check = [&](const char* key, int want) {
    if (!file.isParameter(key)) return;
    require(file.isType<int>(key) && file.get<int>(key) == want, "plan file ", path,
            " was made for ", key, " = ",
            file.isType<int>(key) ? std::to_string(file.get<int>(key)) : std::string("?"),
            " but this run has ", key, " = ", want, "; make a plan for this model");
  };
  check("hidden", get_param<int>(merged, "model.hidden"));
  check("heads", get_param<int>(merged, "model.heads"));
  const auto count = [&](const char* key) {
    return static_cast<std::size_t>(std::max(0, get_param<int>(merged, key)));
  };
  check("kv_heads", static_cast<int>(kv_heads_of(count("model.heads"), count("model.kv_heads"))));
  check("tokens",
        get_param<int>(merged, "model.seq_len") * get_param<int>(merged, "model.sequences"));
  // The MLP whose FF1 and FF2 the plan's layers were tuned for (plans before SwiGLU: GeLU's).
  const MlpChoice mlp = mlp_from(merged);
  check("ffn", static_cast<int>(ffn_of(count("model.hidden"), mlp.mlp, mlp.ffn_hidden)));
  if (file.isParameter("mlp")) {
    const std::string made_for = Teuchos::toString(file.getEntry("mlp").getAny());
    require(made_for == mlp_name(mlp.mlp), "plan file ", path,
            " was made for model.mlp = ", made_for,
            " but this run has model.mlp = ", mlp_name(mlp.mlp), "; make a plan for this model");
  }
  // The optimizer whose state the plan's memory estimate counts.
  if (file.isSublist("optimizer") && file.sublist("optimizer").isParameter("kind")) {
    const std::string made_for =
        Teuchos::toString(file.sublist("optimizer").getEntry("kind").getAny());
    const std::string runs = get_param<std::string>(merged, "optimizer.kind");
    const char* counts = " (its memory estimate counts that optimizer's state)";
    require(made_for == runs, "plan file ", path, " was made for optimizer.kind = ", made_for,
            counts, " but this run has optimizer.kind = ", runs,
            "; make a plan with planner.optimizer: ", runs);
  }
  // The precision whose element width the plan's GEMMs and messages were timed at.
  if (file.isSublist("train") && file.sublist("train").isParameter("precision")) {
    const std::string made_for =
        Teuchos::toString(file.sublist("train").getEntry("precision").getAny());
    const std::string runs = get_param<std::string>(merged, "train.precision");
    require(made_for == runs, "plan file ", path, " was made for train.precision = ", made_for,
            " (its GEMMs and messages timed at that precision's element width) but this run has "
            "train.precision = ",
            runs, "; make a plan with meshslice-tune's precision: ", runs);
  }
  require(file.isParameter("layers") && file.isType<Teuchos::Array<std::string>>("layers"),
          "plan file ", path,
          ": needs a `layers` key holding a list of entries such as "
          "'ff1 W meshslice S=4' (one per FC layer)");
  merged.sublist("plan").set("layers", file.get<Teuchos::Array<std::string>>("layers"));
  return merged;
}

}  // namespace

Settings settings_from(const AppContext& context) {
  Settings s;
  const Teuchos::ParameterList d = deck_with_plan(context.deck, s.plan_applied);
  s.emulate_only = get_param<bool>(d, "train.emulate_only");
  // The data-free emulation's mesh is not the MPI job's: it is given whole.
  require(!s.emulate_only || get_param<int>(d, "mesh.cols") > 0,
          "train.emulate_only emulates "
          "the mesh the deck names, not the MPI job's: set mesh.cols (0 takes the job's ranks)");
  s.mesh = mesh_shape_from(d, context.size);
  require(s.plan_applied.empty() || s.emulate_only || s.mesh.total() == context.size, "plan file ",
          get_param<std::string>(d, "plan.file"), " sets mesh ", s.mesh.str(), " (", s.mesh.total(),
          " ranks) but the job has ", context.size, " MPI ranks; run it with mpiexec -np ",
          s.mesh.total(), " or make a plan for ", context.size, " ranks");
  s.comm = comm_options_from(d);
  const auto positive = [&d](const std::string& key) {
    const int v = get_param<int>(d, key);
    require(v > 0, key, " = ", v, " must be positive");
    return static_cast<std::size_t>(v);
  };
  const auto non_negative = [&d](const std::string& key) {
    const int v = get_param<int>(d, key);
    require(v >= 0, key, " = ", v, " must not be negative");
    return static_cast<std::size_t>(v);
  };
  s.model.hidden = positive("model.hidden");
  s.model.heads = positive("model.heads");
  s.model.kv_heads = non_negative("model.kv_heads");
  s.model.blocks = positive("model.blocks");
  s.model.seq_len = positive("model.seq_len");
  s.model.sequences = positive("model.sequences");
  s.model.rope = get_param<bool>(d, "model.rope");
  const MlpChoice mlp = mlp_from(d);
  s.model.mlp = mlp.mlp;
  s.model.ffn_hidden = mlp.ffn_hidden;
  s.lm = get_param<std::string>(d, "train.task") == "lm";
  if (s.lm) {
    s.model.vocab = positive("model.vocab");
    s.model.tied_head = get_param<bool>(d, "model.tied_head");
    s.data.prefix = get_param<std::string>(d, "data.prefix");
    require(!s.data.prefix.empty(),
            "train.task = lm trains on a token dataset: set data.prefix "
            "to its path without .bin / .idx (meshslice-data makes one from text files)");
    s.data.held_out = get_param<double>(d, "data.held_out");
    require(s.data.held_out > 0 && s.data.held_out < 1, "data.held_out = ", s.data.held_out,
            " must lie between 0 and 1");
    s.data.byte_level = get_param<bool>(d, "data.byte_level");
    s.sample_every = non_negative("train.sample_every");
    s.sample_prompt = get_param<std::string>(d, "train.sample_prompt");
    s.sample_tokens = positive("train.sample_tokens");
    s.sampling.temperature = get_param<double>(d, "train.sample_temperature");
    require(s.sampling.temperature >= 0 && std::isfinite(s.sampling.temperature),
            "train.sample_temperature = ", s.sampling.temperature,
            ": use 0 (greedy) or a "
            "positive temperature such as 0.8");
    s.sampling.seed = static_cast<std::uint64_t>(non_negative("train.sample_seed"));
    require(s.sample_every == 0 || (s.data.byte_level && !s.sample_prompt.empty()),
            "train.sample_every: the samples continue a text prompt, which needs a byte-level "
            "dataset (data.byte_level) and a non-empty train.sample_prompt");
  }
  const std::size_t stages = non_negative("pipeline.stages");
  require(stages == 0 || stages == static_cast<std::size_t>(s.mesh.pp),
          "pipeline.stages = ", stages, " but mesh.pp = ", s.mesh.pp,
          ": the stages are the mesh's pp axis; set "
          "mesh.pp = ",
          stages, " (or leave pipeline.stages at 0)");
  s.step.schedule = parse_schedule(get_param<std::string>(d, "pipeline.schedule"));
  s.step.micro_batches = positive("pipeline.microbatches");
  s.step.virtual_stages = positive("pipeline.virtual_stages");
  for (const std::string& entry : get_strings(d, "recompute.blocks")) {
    if (entry == "all") {
      for (std::size_t b = 0; b < s.model.blocks; ++b) s.step.checkpointed.insert(b);
      continue;
    }
    std::size_t used = 0;
    long block = -1;
    try {
      block = std::stol(entry, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == entry.size() && block >= 0, "recompute.blocks holds '", entry,
            "': give block numbers (0 to model.blocks - 1) or 'all'");
    s.step.checkpointed.insert(static_cast<std::size_t>(block));
  }
  check_step_settings(s.step, s.model, s.mesh);
  OptimizerSettings& o = s.optimizer;
  o.kind = parse_optimizer(get_param<std::string>(d, "optimizer.kind"));
  o.lr = get_param<double>(d, "optimizer.lr");
  o.min_lr = get_param<double>(d, "optimizer.min_lr");
  require(o.lr > 0 && o.min_lr >= 0 && o.min_lr <= o.lr, "optimizer.lr = ", o.lr,
          " and optimizer.min_lr = ", o.min_lr, ": need lr > 0 and 0 <= min_lr <= lr");
  o.warmup_steps = non_negative("optimizer.warmup_steps");
  for (const OptimizerKey& k : optimizer_deck_keys()) {
    const double v = get_param<double>(d, concat("optimizer.", k.key));
    require(v >= k.min && v < k.below, "optimizer.", k.key, " = ", v, " must lie in [", k.min, ", ",
            k.below, ")");
    o.set(k.key, v);
  }
  o.clip_norm = get_param<double>(d, "optimizer.clip_norm");
  s.step.zero = get_param<bool>(d, "optimizer.zero");
  s.steps = positive("train.steps");
  o.total_steps = s.steps;
  s.eval_every = non_negative("train.eval_every");
  s.eval_batches = positive("train.eval_batches");
  s.log_every = positive("train.log_every");
  s.tensorboard = get_param<bool>(d, "train.tensorboard");
  s.plot = get_param<bool>(d, "train.plot");
  s.precision = get_param<std::string>(d, "train.precision");
  require(s.precision != "tf32" || tf32_gemm_available(),
          "train.precision = tf32 multiplies on NVIDIA tensor cores through cuBLAS, which this "
          "build (",
          ExecSpace::name(), ") lacks: use float (IEEE), or bf16");
  s.skip_nonfinite = get_param<std::string>(d, "train.on_nonfinite") == "skip";
  s.max_skipped = non_negative("train.max_skipped");
  s.seeds = {static_cast<std::uint64_t>(non_negative("train.seed_student")),
             static_cast<std::uint64_t>(non_negative("train.seed_teacher")),
             static_cast<std::uint64_t>(non_negative("train.seed_data"))};
  // A language model's data stream is the dataset's: checkpoints record and check its seed with
  // the task's others.
  if (s.lm) s.seeds.data = static_cast<std::uint64_t>(non_negative("data.seed"));
  s.gemm_chunks = static_cast<int>(positive("train.gemm_chunks"));
  s.fail_at_collective = get_param<int>(d, "debug.fail_at_collective");
  s.fail_on_rank = get_param<int>(d, "debug.fail_on_rank");
  require(s.fail_on_rank >= 0 && s.fail_on_rank < context.size,
          "debug.fail_on_rank = ", s.fail_on_rank, " is not a rank of this job (0 to ",
          context.size - 1, ")");
  s.flight = flight_settings_from(d, context.out_dir, context.rank);
  s.flight.inject = parse_injected_fault(get_param<std::string>(d, "debug.inject"));
  s.flight.inject_rank = s.fail_on_rank;
  s.flight.inject_at = positive("debug.inject_at_op");
  s.flight.inject_sleep_seconds = get_param<double>(d, "debug.inject_sleep_seconds");
  if (s.flight.inject_sleep_seconds <= 0)
    s.flight.inject_sleep_seconds = s.flight.timeout_seconds + 60;
  require(s.flight.inject == InjectedFault::none || s.flight.capacity > 0,
          "debug.inject = ", injected_fault_name(s.flight.inject),
          " acts through the flight recorder: set "
          "comm.flight_recorder > 0");
  for (const int step : get_ints(d, "train.trace_steps")) {
    require(step >= 1 && static_cast<std::size_t>(step) <= s.steps, "train.trace_steps holds ",
            step, ", not a step of this run (1 to train.steps = ", s.steps, ")");
    s.trace_steps.insert(static_cast<std::size_t>(step));
  }
  s.checkpoint.every = non_negative("checkpoint.every");
  s.checkpoint.keep = non_negative("checkpoint.keep");
  s.checkpoint.at_end = get_param<bool>(d, "checkpoint.at_end");
  s.checkpoint.dir = get_param<std::string>(d, "checkpoint.dir");
  if (s.checkpoint.dir.empty()) s.checkpoint.dir = context.out_dir + "/checkpoints";
  s.checkpoint.resume = get_param<std::string>(d, "checkpoint.resume");
  const std::string hardware = get_param<std::string>(d, "hardware");
  // The emulated chips multiply and move this run's elements, not the description's own width.
  if (hardware != "none")
    s.machine = std::make_shared<const hw::MachineModel>(sim::at_element_bytes(
        sim::load_machine_model(hardware, "hardware"), precision_element_bytes(s.precision)));
  s.plan_source = get_param<std::string>(d, "plan.source");
  s.default_choice.algorithm = parse_algorithm(get_param<std::string>(d, "plan.algorithm"));
  s.default_choice.options = {static_cast<int>(positive("plan.slices")),
                              static_cast<int>(positive("plan.block"))};
  s.plan_layers = get_strings(d, "plan.layers");
  s.plan_file = get_param<std::string>(d, "plan.file");
  const std::string attention = get_param<std::string>(d, "plan.attention");
  s.attention = default_attention_kernel();
  if (attention != "auto") parse_attention_kernel(attention, s.attention);
  require(s.plan_source != "file" || !s.plan_file.empty(),
          "plan.source = file needs plan.file, the path of the plan file");
  return s;
}

namespace {

// The FC layers' plans: the default rule's, the deck's entries or the plan file's.
ModelPlan layer_plans(const Settings& s) {
  if (s.plan_source == "default") return default_model_plan(s.model, s.default_choice);
  try {
    // The deck's entries, or the plan file's (deck_with_plan).
    return parse_model_plan(s.plan_layers, s.model);
  } catch (const UserError& e) {
    if (s.plan_source != "file") throw;
    throw UserError(concat("plan file ", s.plan_file, ": ", e.what()));
  }
}

}  // namespace

ModelPlan model_plan(const Settings& s) {
  ModelPlan plan = layer_plans(s);
  plan.attention = s.attention;
  return plan;
}

}  // namespace meshslice::train
