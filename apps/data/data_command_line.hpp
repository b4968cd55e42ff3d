#pragma once
// meshslice-data's command line. It is not the deck-based one of the other apps (core/cli.hpp):
// the app takes a list of files and folders, writes a dataset prefix rather than an output
// folder, and runs without MPI.
//     meshslice-data [--out PREFIX] [--held-out FRACTION] [--seed N] FILE_OR_DIR...
#include <cstdint>
#include <string>
#include <vector>

namespace meshslice::dataapp {

struct DataCommandLine {
  std::vector<std::string> inputs;  // files and folders, in command-line order
  std::string prefix = "out/text";
  double held_out = 0.05;
  std::uint64_t seed = 1234;
  bool help = false;
  bool version = false;
};

// A UserError, ending with the usage line, for an unknown option, a missing or malformed value,
// a held-out fraction outside [0, 1) or no input (unless --help or --version).
DataCommandLine parse_data_command_line(int argc, char** argv);

std::string data_usage();
std::string data_help();

}  // namespace meshslice::dataapp
