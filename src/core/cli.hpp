#pragma once
// The command line every app shares:
//     meshslice-X [DECK.yaml] [--set key.sub=value]... [--out DIR] [--help]
#include <string>
#include <vector>

namespace meshslice {

struct CommandLine {
  std::string deck_path;               // empty when not given (the app's default deck applies)
  std::vector<std::string> overrides;  // "key.sub=value", in command-line order
  std::string out_dir = "out";
  bool help = false;
};

// Parses argv. An unknown option, a missing option value, a second deck or (when `deck_required`)
// a missing deck is a UserError that ends with a usage hint. With --help nothing is required.
// Arguments starting with --kokkos- are skipped: they belong to Kokkos::initialize.
CommandLine parse_command_line(int argc, char** argv, bool deck_required = true);

// "usage: NAME DECK.yaml [--set key.sub=value]... [--out DIR] [--help]"
std::string usage_line(const std::string& program, bool deck_required = true);

}  // namespace meshslice
