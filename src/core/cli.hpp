#pragma once
// The command line every app shares:
//     meshslice-X [DECK.yaml] [--set key.sub=value]... [--out DIR] [--help] [--version]
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace meshslice {

struct CommandLine {
  std::string deck_path;               // empty when not given (the app's default deck applies)
  std::vector<std::string> overrides;  // "key.sub=value", in command-line order
  std::string out_dir = "out";
  bool help = false;
  bool version = false;  // run_app answers --version before it starts MPI (see wants_version)
};

// Parses argv. An unknown option, a missing option value, a second deck or (when `deck_required`)
// a missing deck is a UserError that ends with a usage hint. With --help nothing is required.
// Arguments starting with --kokkos- are skipped (they belong to Kokkos::initialize) when they
// name an option of kokkos_options(); any other --kokkos-* is a UserError (a typo Kokkos would
// silently ignore).
// `shorthands`: the app's option names (without --) that `--NAME VALUE` gives as the override
// NAME=VALUE (core/app.hpp's AppSpec::shorthands).
CommandLine parse_command_line(int argc, char** argv, bool deck_required = true,
                               const std::vector<std::string>& shorthands = {});

// The --kokkos-* options Kokkos::initialize reads, Kokkos 3.4's and 4.x's (some were renamed),
// each with what it sets; --help lists them.
struct KokkosOption {
  const char* name;
  const char* value;  // "=N", or "" for a flag
  const char* meaning;
};
const std::vector<KokkosOption>& kokkos_options();

// "usage: NAME DECK.yaml [--set key.sub=value]... [--out DIR] [--help] [--version]"
std::string usage_line(const std::string& program, bool deck_required = true);

// Takes the flags every meshslice command line has: sets `help` for -h or --help, `version` for
// --version, and returns whether `arg` was one of them.
bool help_or_version(const std::string& arg, bool& help, bool& version);

// The value of option `name` ("--out") when argv[i] is that option, given as "--name=value" or
// as "--name value" (then i moves on past the value); nullopt when argv[i] is something else. A
// missing or empty value is the UserError `fail` makes of the problem (an app adds its usage).
std::optional<std::string> option_value(int argc, char** argv, int& i, const std::string& name,
                                        const std::function<UserError(const std::string&)>& fail);

// True when argv asks for --version. Checked before anything else starts: printing the build's
// versions needs no MPI, no Kokkos and no deck.
bool wants_version(int argc, char** argv);

}  // namespace meshslice
