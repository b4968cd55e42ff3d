#pragma once
// One fuzz input through the deck code path an app runs (core/app.cpp's run_app): parse the deck
// text, parse the command line, apply each --set, validate and fill in defaults, then write the
// resolved deck and read it back. Shared by the libFuzzer target (fuzz_deck.cpp) and the
// regression test (test_fuzz_regressions.cpp), so that a kept input replays exactly what the
// fuzzer ran.
//
// Input format: deck YAML, then optionally a line that is exactly `--`; every line after it is one
// command-line argument (e.g. `--set` then `mesh.rows=2`, or `--set=model.hidden=8`).
//
// Expected outcomes: run_deck_input returns, or throws meshslice::UserError (a mistake the user
// is told about). Anything else escaping is a finding: another exception type (a raw Teuchos
// exception, std::out_of_range from a conversion), a crash or a sanitizer report, or a resolved
// deck that does not read back to itself (thrown as DeckRoundTripError).
#include <Teuchos_ParameterEntryValidator.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/deck.hpp"
#include "core/errors.hpp"

namespace meshslice::fuzz {

// A number range, the kind of validator an app may attach beyond string choices (Teuchos'
// EnhancedNumberValidator lives in a header Trilinos 13.2 cannot compile as C++20).
class RangeValidator : public Teuchos::ParameterEntryValidator {
 public:
  RangeValidator(double low, double high) : low_(low), high_(high) {}
  const std::string getXMLTypeName() const override { return "fuzz_range"; }
  void printDoc(const std::string& doc, std::ostream& out) const override {
    out << "# " << doc << "\n";
  }
  ValidStringsList validStringValues() const override { return Teuchos::null; }
  void validate(const Teuchos::ParameterEntry& entry, const std::string& name,
                const std::string&) const override {
    const double value = Teuchos::getValue<double>(entry);
    if (!(value >= low_ && value <= high_))
      throw std::invalid_argument(name + " is outside [" + std::to_string(low_) + ", " +
                                  std::to_string(high_) + "]");
  }

 private:
  double low_, high_;
};

// The resolved deck written by write_deck_yaml did not load back to the same deck: deck.hpp
// promises it does (the deck.yaml of a run reproduces the run). Not a UserError on purpose.
class DeckRoundTripError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// A valid list shaped like the apps' (meshslice-train's sublists and keys as of this writing, plus
// meshslice-bench's `mode` and `gemm`; defaults simplified): every entry type the deck code
// handles (int, double, bool, string, int/double/string arrays, nested sublists), choices, and
// one Teuchos range validator. Not apps/train/train_settings.cpp itself: it pulls in most of
// the library.
inline Teuchos::ParameterList representative_valid_parameters() {
  using Teuchos::Array;
  Teuchos::ParameterList valid("fuzz");
  auto& mesh = valid.sublist("mesh", false, "torus");
  for (const char* axis : {"dp", "pp", "rows"}) mesh.set(axis, 1, "axis size");
  mesh.set("cols", 0, "0 = all remaining ranks");
  auto& comm = valid.sublist("comm", false, "collectives");
  set_choice(comm, "implementation", "native", {"native", "ring"}, "how collectives run");
  comm.set("gpu_aware_mpi", false, "device pointers to MPI");
  comm.set("packet_bytes", 1 << 20, "ring packet size");
  valid.set("hardware", "none", "emulated machine name or path");
  set_choice(valid, "mode", "gemm", {"gemm", "collectives"}, "bench mode");
  auto& model = valid.sublist("model", false, "transformer");
  for (const char* key : {"hidden", "heads", "blocks", "seq_len", "sequences"})
    model.set(key, 4, "model size");
  auto& opt = valid.sublist("optimizer", false, "optimizer");
  set_choice(opt, "kind", "adamw", {"adamw", "sgd"}, "optimizer kind");
  for (const char* key : {"lr", "min_lr", "momentum", "beta1", "beta2", "epsilon"})
    opt.set(key, 0.5, "optimizer setting");
  opt.set("warmup_steps", 50, "warm-up steps");
  // A number range: check_allowed's path for validators other than string choices.
  opt.set("clip_norm", 1.0, "clip norm in [0, 100]", Teuchos::rcp(new RangeValidator(0.0, 100.0)));
  auto& train = valid.sublist("train", false, "the run");
  for (const char* key : {"steps", "eval_every", "eval_batches", "log_every", "gemm_chunks"})
    train.set(key, 10, "run setting");
  set_choice(train, "precision", "float", {"float", "double"}, "scalar type");
  train.set("trace_steps", Array<int>(), "steps to trace");
  auto& plan = valid.sublist("plan", false, "GEMM plan");
  set_choice(plan, "source", "default", {"default", "layers", "file"}, "plan source");
  plan.set("algorithm", "meshslice", "default algorithm");
  plan.set("layers", Array<std::string>(2, "ff1 Y meshslice S=2"), "per-layer entries");
  plan.set("file", "", "plan file");
  auto& gemm = valid.sublist("gemm", false, "bench gemm");
  gemm.set("algorithms", Array<std::string>(1, "meshslice"), "algorithms");
  gemm.set("M", Array<int>(2, 4096), "rows of C");
  gemm.set("ratios", Array<double>(2, 0.5), "a double array");
  gemm.set("verify", true, "check results");
  gemm.sublist("link", false, "a sublist two levels down").set("bandwidth", 45.0, "GB/s");
  return valid;
}

struct DeckInput {
  std::string deck;
  std::vector<std::string> args;  // command-line arguments after the program name
};

// The deck text and the arguments (format above). At most 16 arguments: more add nothing.
inline DeckInput split_deck_input(const std::string& data) {
  DeckInput input{data, {}};
  for (std::string::size_type at = 0; at < data.size();) {  // `at`: where a line starts
    const std::string::size_type end = std::min(data.find('\n', at), data.size());
    if (data.compare(at, end - at, "--") != 0) {
      at = end + 1;
      continue;
    }
    input.deck = data.substr(0, at);
    for (at = end + 1; at < data.size() && input.args.size() < 16;) {
      const std::string::size_type stop = std::min(data.find('\n', at), data.size());
      input.args.push_back(data.substr(at, stop - at));
      at = stop + 1;
    }
    break;
  }
  return input;
}

// True for an empty array: deck.hpp's one documented exception to the round trip (YAML cannot
// type `[]`, so deck.yaml records it as a comment and loads back the default).
inline bool is_empty_array(const Teuchos::ParameterEntry& entry) {
  using Teuchos::Array;
  using Teuchos::getValue;
  return (entry.isType<Array<int>>() && getValue<Array<int>>(entry).empty()) ||
         (entry.isType<Array<double>>() && getValue<Array<double>>(entry).empty()) ||
         (entry.isType<Array<std::string>>() && getValue<Array<std::string>>(entry).empty());
}

// The dotted key of the first entry of `a` whose type or value differs in `b`, or "" when none
// does. Both are resolved decks: validate_and_fill gave them the same keys.
inline std::string first_difference(const Teuchos::ParameterList& a,
                                    const Teuchos::ParameterList& b,
                                    const std::string& prefix = "") {
  for (auto it = a.begin(); it != a.end(); ++it) {
    const std::string key = prefix + a.name(it);
    const Teuchos::ParameterEntry* other = b.getEntryPtr(a.name(it));
    if (other == nullptr || other->isList() != a.entry(it).isList()) return key;
    if (other->isList()) {
      using Teuchos::getValue;
      const std::string inner =
          first_difference(getValue<Teuchos::ParameterList>(a.entry(it)),
                           getValue<Teuchos::ParameterList>(*other), key + ".");
      if (!inner.empty()) return inner;
    } else if (!(a.entry(it).getAny(false) == other->getAny(false)) &&
               !is_empty_array(a.entry(it))) {
      return key;
    }
  }
  return "";
}

// The resolved deck written out (as write_deck_yaml writes deck.yaml) and read back must give
// the same values and types again (deck.hpp's promise for deck_yaml_text).
inline void check_round_trip(const Teuchos::ParameterList& deck,
                             const Teuchos::ParameterList& valid) {
  const std::string text = deck_yaml_text(deck);
  Teuchos::ParameterList reread;
  try {
    reread = parse_deck_yaml(text, "deck.yaml");
    validate_and_fill(reread, valid);
  } catch (const UserError& e) {
    throw DeckRoundTripError("the resolved deck does not load back: " + std::string(e.what()));
  }
  const std::string key = first_difference(deck, reread);
  if (!key.empty()) {
    std::ostringstream message;
    message << "the resolved deck loads back with another '" << key << "': '"
            << find_entry(deck, key).getAny(false) << "' became '"
            << find_entry(reread, key).getAny(false) << "'";
    throw DeckRoundTripError(message.str());
  }
}

inline void run_deck_input(const std::string& data) {
  static const Teuchos::ParameterList valid = representative_valid_parameters();
  const DeckInput input = split_deck_input(data);
  Teuchos::ParameterList deck = parse_deck_yaml(input.deck, "fuzz.yaml");
  std::vector<std::string> words = {"meshslice-fuzz"};
  words.insert(words.end(), input.args.begin(), input.args.end());
  std::vector<char*> argv;  // C strings, as main() gets them: a NUL byte ends an argument
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const CommandLine line =
      parse_command_line(static_cast<int>(words.size()), argv.data(), /*deck_required=*/false);
  for (const std::string& assignment : line.overrides) apply_override(deck, valid, assignment);
  validate_and_fill(deck, valid);
  check_round_trip(deck, valid);
}

}  // namespace meshslice::fuzz
