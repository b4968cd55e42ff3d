// meshslice-export: a meshslice checkpoint as a model others can run. Writes OUT/config.json
// and OUT/model.safetensors as Hugging Face transformers reads a Llama (LlamaForCausalLM,
// llama_export.hpp), in the checkpoint's precision; refuses, naming why, a model Llama cannot
// express. One process, no MPI and no Kokkos: it reads the checkpoint's global tensors
// (checkpoint/checkpoint_reader.hpp) whatever layout saved them. Exit status as the other apps':
// 0, 2 on bad input (one "meshslice-export: error: ..." line), 3 on an internal error.
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_reader.hpp"
#include "checkpoint/safetensors.hpp"
#include "core/app.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"
#include "model/model_shape_record.hpp"
#include "llama_export.hpp"

namespace {

using namespace meshslice;
using namespace meshslice::exportapp;

constexpr const char* kApp = "meshslice-export";

const char* const kHelp =
    "usage: meshslice-export CHECKPOINT OUT\n"
    "\n"
    "Writes the language model saved in CHECKPOINT (a checkpoint directory, e.g.\n"
    "OUT/checkpoints/latest of a meshslice-train run) as Hugging Face transformers reads a\n"
    "Llama: OUT/config.json (LlamaForCausalLM: sizes, heads and key-value heads, rms_norm_eps,\n"
    "rope_theta, tie_word_embeddings) and OUT/model.safetensors (transformers' tensor names,\n"
    "projections as out x in), in the checkpoint's precision (float32, float64 or bfloat16). Load "
    "it with\n"
    "    transformers.LlamaForCausalLM.from_pretrained(OUT)\n"
    "The model must be Llama's: a language model (train.task = lm) with model.mlp = swiglu and\n"
    "model.rope = true; any model.kv_heads and model.tied_head. Its token ids are "
    "meshslice-data's\n"
    "(byte b is id b, 256 ends a document): no tokenizer is written.\n"
    "\n"
    "options:\n"
    "  --help     this text\n"
    "  --version  the build\n";

struct Arguments {
  bool help = false, version = false;
  std::string checkpoint, out;
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h")
      a.help = true;
    else if (arg == "--version")
      a.version = true;
    else if (arg.rfind("-", 0) == 0)
      throw UserError(concat("unknown option '", arg, "'; see meshslice-export --help"));
    else
      positional.push_back(arg);
  }
  if (a.help || a.version) return a;
  require(positional.size() == 2,
          "give a checkpoint directory and an output folder "
          "(meshslice-export CHECKPOINT OUT), not ",
          positional.size(), " argument(s)");
  a.checkpoint = positional[0];
  a.out = positional[1];
  return a;
}

// The tensor `t` of the export from the checkpoint's, in the export's element type.
template <class Out>
void append_tensor(const CheckpointTensor& from, const ExportedTensor& t, std::string& data) {
  const std::size_t rows = from.rows(), cols = from.cols();
  require(t.col0 + t.cols <= cols, "the checkpoint's tensor ", t.source, " has ", cols,
          " columns, the export needs ", t.col0 + t.cols);
  const std::size_t out_rows = t.transposed ? t.cols : rows,
                    out_cols = t.transposed ? rows : t.cols;
  std::vector<Out> values(out_rows * out_cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < t.cols; ++c) {
      const Out v = element_cast<Out>(from.values[r * cols + t.col0 + c]);
      values[t.transposed ? c * rows + r : r * t.cols + c] = v;
    }
  data.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(Out));
}

// The export's element type, in safetensors' and in torch's names: the checkpoint's precision (a
// bf16 run's model file holds BF16; its fp32 master weights stay in the checkpoint).
struct ExportType {
  const char* safetensors;
  const char* torch;
};
ExportType export_type(const std::string& precision) {
  if (precision == "double") return {"F64", "float64"};
  if (precision == "bf16") return {"BF16", "bfloat16"};
  return {"F32", "float32"};
}

int export_checkpoint(const Arguments& a) {
  const SerialCheckpoint checkpoint = read_checkpoint_serially(a.checkpoint);
  const ModelShape shape = recorded_model_shape(a.checkpoint, checkpoint.model);
  const std::string why = llama_incompatibility(shape);
  require(why.empty(), "checkpoint ", a.checkpoint, " cannot be exported as a Llama: ", why);
  const std::string& precision = checkpoint.precision;
  const ExportType type = export_type(precision);
  std::vector<SafetensorsTensor> tensors;
  std::string data;
  for (const ExportedTensor& t : llama_tensors(shape)) {
    const CheckpointTensor& from = checkpoint.tensor(t.source);
    SafetensorsTensor out{t.name, type.safetensors, {}};
    // Dimension by dimension (GCC 12 warns, wrongly, of a null copy from a braced list here).
    if (!t.vector) out.shape.push_back(t.transposed ? t.cols : from.rows());
    out.shape.push_back(t.transposed ? from.rows() : t.cols);
    tensors.push_back(out);
    if (precision == "double")
      append_tensor<double>(from, t, data);
    else if (precision == "bf16")
      append_tensor<bfloat16>(from, t, data);
    else
      append_tensor<float>(from, t, data);
  }
  // transformers reads only safetensors files whose metadata names the framework ("pt").
  const SafetensorsLayout layout = safetensors_layout(
      tensors, {{"format", "pt"}, {"meshslice_step", std::to_string(checkpoint.step)}});
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  require(!ec, "cannot create the output folder ", a.out, ": ", ec.message());
  write_output_file(a.out + "/model.safetensors", layout.prefix + data);
  write_output_file(a.out + "/config.json", llama_config(shape, type.torch).dump(2) + "\n");
  std::cout << kApp << ": " << a.checkpoint << " (step " << checkpoint.step << ", "
            << checkpoint.precision << "): a Llama of " << shape.blocks << " layers, hidden "
            << shape.hidden << ", " << shape.heads << " heads, " << shape.kv()
            << " key-value heads, "
            << "intermediate " << shape.ffn() << ", vocabulary " << shape.vocab
            << (shape.tied_head ? ", tied head" : "") << "\nwrote " << a.out << "/config.json and "
            << a.out << "/model.safetensors (" << tensors.size() << " tensors, "
            << layout.prefix.size() + data.size() << " bytes)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_serial_app(kApp, [&] {
    const Arguments a = parse_arguments(argc, argv);
    if (a.version) {
      std::cout << kApp << "\n" << version_text() << std::flush;
      return 0;
    }
    if (a.help) {
      std::cout << kHelp << std::flush;
      return 0;
    }
    return export_checkpoint(a);
  });
}
