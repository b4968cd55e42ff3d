#include "tune_settings.hpp"

#include <sstream>

#include "comm/comm_parameters.hpp"
#include "core/deck.hpp"
#include "core/errors.hpp"
#include "core/precision.hpp"
#include "model/model_shape_parameters.hpp"
#include "pipeline/pipeline_schedule.hpp"

namespace meshslice::tuneapp {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-tune");
  add_comm_parameters(valid);  // the collectives calibration times
  set_choice(valid, "mode", "tune", {"tune", "plan", "calibrate"},
             "tune: phases 1 and 2 for one tensor-parallel mesh of `chips` chips; plan: the joint "
             "planner, dp x pp x rows x cols = chips with micro-batches, schedule, "
             "recomputation and ZeRO-1 under the memory per chip; calibrate: time this MPI "
             "machine's collectives and GEMMs and write OUT/machine.yaml (every rank takes part)");
  valid.set("machine", std::string("tpuv4-sim"),
            "machine description: a name under hardware/machines/ (tpuv4-sim, tpuv4-cloud) or a "
            "path to a .yaml");
  std::vector<std::string> precisions{"machine"};
  precisions.insert(precisions.end(), precision_names().begin(), precision_names().end());
  set_choice(valid, "precision", "machine", precisions,
             "the train.precision of the run the plan is for: the GEMM operands and messages are "
             "timed at its element width (bf16 2 bytes, float 4, double 8) and plan.yaml records "
             "it (meshslice-train refuses the plan for another precision); machine: the "
             "description's own element_bytes, no precision recorded");
  valid.set("chips", 256, "chips of the tensor-parallel mesh (rows x cols)");
  auto& model = valid.sublist("model", false, "The transformer whose FC layers are tuned.");
  set_choice(model, "name", "gpt3", {"gpt3", "megatron-nlg", "custom"},
             "gpt3 (hidden 12288, 96 heads), megatron-nlg (hidden 20480, 128 heads), or custom "
             "(model.hidden, model.heads)");
  add_model_shape_parameters(
      model, {{"hidden", 0, "for model.name = custom"},
              {"heads", 0, "for model.name = custom"},
              {"kv_heads", 0, ""},
              {"seq_len", 2048, ""},
              {"global_sequences", 0, "0 = chips / 2, the paper's weak scaling"},
              {"vocab", 0,
               "a language model's vocabulary: its head (lm_head, on the vocabulary padded as "
               "meshslice-train pads it) counts in the mesh choice and the planner's step and "
               "memory, and plan.yaml gets its entry; 0 = no head"},
              {"blocks", 0, "for mode plan; 0 = the named model's (gpt3 96, megatron-nlg 105)"}});
  add_mlp_parameters(model);
  auto& search = valid.sublist("search", false, "What phase 2 tries.");
  search.set("slices", Teuchos::Array<int>(std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32}),
             "slice counts S tried for each GEMM (each takes its own best)");
  search.set("block", 8, "block size B of the blocked slicing (TPUs read 128x8 tiles; 1 on CPUs)");
  search.set("min_mesh_side", 1, "meshes with at least this many rows and columns");
  search.set("rows", 0, "only meshes with this many rows (0: every factorization)");
  set_choice(search, "attention", "standard", {"standard", "follows_qkv"},
             "phase 1's transposition chain: standard (meshslice-train's attention runs in the "
             "standard layout, so only FF2 follows FF1's layout) or follows_qkv (the paper's "
             "heuristic: attention keeps the QKV projection's layout)");
  set_choice(search, "gemm_rate", "per_shape", {"per_shape", "effective"},
             "how the cost model times a local GEMM: per_shape (the chip's rate on that GEMM's "
             "shape, as profiling each local GEMM gives it) or effective (FLOPs / one effective "
             "FLOP/s, the paper's formula)");
  valid.set("validate", false,
            "also emulate the tuner's choice on every mesh and the emulator's own optimum (no "
            "data), and print the cost model's error against the emulation");
  auto& plan = valid.sublist("planner", false, "mode plan: what the joint planner searches.");
  plan.set("microbatches", Teuchos::Array<int>(std::vector<int>{1, 2, 4, 8, 16, 32, 64}),
           "micro-batch counts tried (each must divide a replica's sequences)");
  plan.set("schedules",
           Teuchos::Array<std::string>(std::vector<std::string>{"gpipe", "1f1b", "interleaved"}),
           "pipeline schedules tried: gpipe, 1f1b, interleaved");
  plan.set("virtual_stages", 2, "interleaved: model chunks per stage");
  set_choice(plan, "recompute", "both", {"both", "off", "all"},
             "activation recomputation tried: both, off (never), all (every block)");
  set_choice(plan, "zero", "both", {"both", "off", "on"}, "ZeRO-1 tried: both, off, on");
  set_choice(plan, "optimizer", optimizer_names().front(), optimizer_names(),
             "the optimizer meshslice-train will run (its optimizer.kind): the memory estimate "
             "counts its state tensors");
  plan.set("memory_gib", 0.0, "memory per chip (GiB); 0 = the machine's HBM (hbm_gib)");
  plan.set("top", 10, "configurations in the ranking");
  auto& cal = valid.sublist("calibrate", false, "mode calibrate: what is timed.");
  cal.set("name", std::string("calibrated"), "the machine's name in OUT/machine.yaml");
  cal.set("min_kib", 8, "smallest shard per rank in KiB (sizes double up to max_kib)");
  cal.set("max_kib", 65536,
          "largest shard per rank in KiB (lowered to what the node's free "
          "memory holds)");
  cal.set("warmups", 1, "untimed runs per size");
  cal.set("repetitions", 5, "timed runs per size (the median counts) and per GEMM (the best)");
  cal.set("gemm_shapes",
          Teuchos::Array<std::string>(std::vector<std::string>{
              "256x256x256", "512x512x512", "1024x1024x1024", "2048x2048x2048", "2048x2048x256",
              "2048x256x2048", "256x2048x2048", "4096x1536x512", "256x256x64", "256x64x256",
              "64x256x256"}),
          "local GEMMs timed, MxNxK");
  return valid;
}

namespace {

std::vector<bool> tried(const std::string& choice, const std::string& on) {
  if (choice == "both") return {false, true};
  return {choice == on};
}

}  // namespace

TuneSettings tune_settings_from(const Teuchos::ParameterList& deck) {
  TuneSettings s;
  s.mode = get_param<std::string>(deck, "mode");
  s.machine = get_param<std::string>(deck, "machine");
  s.precision = get_param<std::string>(deck, "precision");
  s.chips = get_param<int>(deck, "chips");
  require(s.chips >= 1, "chips = ", s.chips, " must be at least 1");
  const std::string name = get_param<std::string>(deck, "model.name");
  const int hidden = get_param<int>(deck, "model.hidden"),
            heads = get_param<int>(deck, "model.heads");
  if (name == "custom") {
    require(hidden >= 1 && heads >= 1 && hidden % heads == 0,
            "model.name = custom needs "
            "model.hidden and model.heads, positive, hidden a multiple of heads (got ",
            hidden, " and ", heads, ")");
    s.llm = {"custom", concat("H=", hidden), static_cast<std::size_t>(hidden), heads};
  } else {
    require(hidden == 0 && heads == 0,
            "model.hidden and model.heads are for model.name = "
            "custom; ",
            name, " has its own (leave them at 0)");
    s.llm = sim::llm_by_name(name);
  }
  const int kv_heads = get_param<int>(deck, "model.kv_heads");
  require(kv_heads >= 0 && (kv_heads == 0 || s.llm.heads % kv_heads == 0),
          "model.kv_heads = ", kv_heads, " must divide the model's ", s.llm.heads,
          " heads (0: one per head)");
  s.llm.kv_heads = static_cast<std::size_t>(kv_heads);
  const MlpChoice mlp = mlp_from(deck);
  s.llm.mlp = mlp.mlp;
  s.llm.ffn = mlp.ffn_hidden;
  const int seq_len = get_param<int>(deck, "model.seq_len");
  const int sequences = get_param<int>(deck, "model.global_sequences");
  require(seq_len >= 1, "model.seq_len = ", seq_len, " must be at least 1");
  require(sequences >= 0, "model.global_sequences = ", sequences, " must not be negative");
  require(sequences > 0 || s.chips % 2 == 0,
          "model.global_sequences = 0 means chips / 2, but chips = ", s.chips,
          " is odd; give model.global_sequences");
  const int vocab = get_param<int>(deck, "model.vocab");
  require(vocab >= 0, "model.vocab = ", vocab, " must not be negative (0: no head)");
  s.vocab = static_cast<std::size_t>(vocab);
  s.seq_len = static_cast<std::size_t>(seq_len);
  s.sequences = static_cast<std::size_t>(sequences > 0 ? sequences : s.chips / 2);
  s.search.slices = get_ints(deck, "search.slices");
  require(!s.search.slices.empty(), "search.slices is empty; give at least one S (e.g. 1)");
  for (int S : s.search.slices) require(S >= 1, "search.slices holds ", S, "; S must be >= 1");
  s.search.block = get_param<int>(deck, "search.block");
  require(s.search.block >= 1, "search.block = ", s.search.block, " must be at least 1");
  s.search.min_mesh_side = get_param<int>(deck, "search.min_mesh_side");
  require(s.search.min_mesh_side >= 1, "search.min_mesh_side = ", s.search.min_mesh_side,
          " must be at least 1");
  s.search.rows = get_param<int>(deck, "search.rows");
  require(s.search.rows >= 0, "search.rows = ", s.search.rows, " must not be negative (0: any)");
  s.attention = get_param<std::string>(deck, "search.attention") == "standard"
                    ? sim::AttentionLayout::standard
                    : sim::AttentionLayout::follows_qkv;
  s.gemm_rate = tune::parse_gemm_rate(get_param<std::string>(deck, "search.gemm_rate"));
  s.validate = get_param<bool>(deck, "validate");
  const int blocks = get_param<int>(deck, "model.blocks");
  require(blocks >= 0, "model.blocks = ", blocks, " must not be negative");
  s.blocks = blocks > 0 ? static_cast<std::size_t>(blocks) : s.llm.blocks;
  require(s.mode != "plan" || s.blocks > 0, "mode plan needs model.blocks for a custom model");
  require(s.vocab == 0 || s.blocks > 0,
          "model.vocab needs model.blocks for a custom model: the head's time is weighed against "
          "the blocks' in the mesh choice");
  tune::PlannerOptions& p = s.planner;
  p.search = s.search;
  p.attention = s.attention;
  p.microbatches.clear();
  for (int m : get_ints(deck, "planner.microbatches")) {
    require(m >= 1, "planner.microbatches holds ", m, "; micro-batch counts must be >= 1");
    p.microbatches.push_back(static_cast<std::size_t>(m));
  }
  p.schedules.clear();
  for (const std::string& name : get_strings(deck, "planner.schedules"))
    p.schedules.push_back(parse_schedule(name));
  const int v = get_param<int>(deck, "planner.virtual_stages");
  require(v >= 2, "planner.virtual_stages = ", v,
          " must be at least 2 (chunks per stage of the "
          "interleaved schedule)");
  p.virtual_stages = static_cast<std::size_t>(v);
  p.checkpointing = tried(get_param<std::string>(deck, "planner.recompute"), "all");
  p.zero = tried(get_param<std::string>(deck, "planner.zero"), "on");
  s.optimizer = parse_optimizer(get_param<std::string>(deck, "planner.optimizer"));
  const double gib = get_param<double>(deck, "planner.memory_gib");
  require(gib >= 0, "planner.memory_gib = ", gib, " must not be negative (0: the machine's HBM)");
  p.memory_bytes = gib * 1024 * 1024 * 1024;
  tune::CalibrationOptions& c = s.calibration;
  c.comm = comm_options_from(deck);
  s.calibration_name = get_param<std::string>(deck, "calibrate.name");
  const int min_kib = get_param<int>(deck, "calibrate.min_kib");
  const int max_kib = get_param<int>(deck, "calibrate.max_kib");
  require(min_kib >= 1 && max_kib >= 2 * min_kib, "calibrate.min_kib = ", min_kib,
          " and calibrate.max_kib = ", max_kib,
          " must satisfy 1 <= min_kib and 2 min_kib <= "
          "max_kib (the fit needs two sizes)");
  c.min_bytes = static_cast<std::size_t>(min_kib) << 10;
  c.max_bytes = static_cast<std::size_t>(max_kib) << 10;
  c.warmups = get_param<int>(deck, "calibrate.warmups");
  c.repetitions = get_param<int>(deck, "calibrate.repetitions");
  require(c.warmups >= 0 && c.repetitions >= 1, "calibrate.warmups must be >= 0 and "
                                                "calibrate.repetitions >= 1");
  for (const std::string& shape : get_strings(deck, "calibrate.gemm_shapes")) {
    std::size_t m = 0, n = 0, k = 0;
    char x1 = 0, x2 = 0, extra = 0;
    std::istringstream in(shape);
    require((in >> m >> x1 >> n >> x2 >> k) && x1 == 'x' && x2 == 'x' && !(in >> extra) && m > 0 &&
                n > 0 && k > 0,
            "calibrate.gemm_shapes holds '", shape,
            "'; write MxNxK with positive sizes, e.g. "
            "1024x1024x256");
    c.gemm_shapes.push_back({m, n, k});
  }
  require(!c.gemm_shapes.empty(), "calibrate.gemm_shapes is empty; give at least one MxNxK");
  const int top = get_param<int>(deck, "planner.top");
  require(top >= 1, "planner.top = ", top, " must be at least 1");
  p.top = static_cast<std::size_t>(top);
  return s;
}

}  // namespace meshslice::tuneapp
