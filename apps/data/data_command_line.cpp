#include "data_command_line.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/cli.hpp"
#include "core/errors.hpp"
#include "data/document_split.hpp"

namespace meshslice::dataapp {

namespace {

UserError usage_error(const std::string& problem) {
  return UserError(concat(problem, "\n", data_usage(), "\n(run 'meshslice-data --help' for more)"));
}

double parse_fraction(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value))
    throw usage_error(concat("--held-out '", text, "' is not a number"));
  return value;
}

std::uint64_t parse_seed(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || text[0] == '+' || *end != '\0' || errno == ERANGE)
    throw usage_error(concat("--seed '", text, "' is not a whole number from 0 to 2^64-1"));
  return value;
}

}  // namespace

std::string data_usage() {
  return "usage: meshslice-data [--out PREFIX] [--held-out FRACTION] [--seed N] FILE_OR_DIR...";
}

std::string data_help() {
  return data_usage() +
         "\n\nTurns text files into a Megatron-LM indexed dataset (PREFIX.bin + PREFIX.idx, the "
         "MMIDIDX format version 1 that Megatron's tools/preprocess_data.py writes) for a "
         "language model to train on, with a byte-level tokenizer: tokens 0-255 are the bytes, "
         "256 ends a document (vocabulary 257). Each regular file is one document; folders are "
         "walked recursively in sorted order (symbolic links to folders are not followed); a "
         "file reached again through a link, a file with the same content as an earlier one and "
         "an empty file are skipped. Prints the counts and the train/held-out split a trainer "
         "with the same fraction and seed uses (documents are held out whole).\n\n"
         "  --out PREFIX         writes PREFIX.bin and PREFIX.idx (default out/text)\n"
         "  --held-out FRACTION  share of the documents held out for evaluation, in [0, 1) "
         "(default 0.05; at least one document each way when there are two or more)\n"
         "  --seed N             the seed of the split (default 1234)\n"
         "  --help, --version\n";
}

DataCommandLine parse_data_command_line(int argc, char** argv) {
  DataCommandLine line;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (help_or_version(arg, line.help, line.version)) {
      continue;
    } else if (auto prefix = option_value(argc, argv, i, "--out", usage_error)) {
      line.prefix = *prefix;
    } else if (auto fraction = option_value(argc, argv, i, "--held-out", usage_error)) {
      line.held_out = parse_fraction(*fraction);
    } else if (auto seed = option_value(argc, argv, i, "--seed", usage_error)) {
      line.seed = parse_seed(*seed);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw usage_error(concat("unknown option '", arg, "'"));
    } else {
      line.inputs.push_back(arg);
    }
  }
  if (line.help || line.version) return line;
  data::check_held_out_fraction(line.held_out, "--held-out");
  if (line.inputs.empty()) throw usage_error("no FILE_OR_DIR given: name the text to prepare");
  return line;
}

}  // namespace meshslice::dataapp
