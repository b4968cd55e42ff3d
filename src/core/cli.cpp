#include "core/cli.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace meshslice {

namespace {

std::string program_name(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return "meshslice";
  const std::string path = argv[0];
  return path.substr(path.find_last_of('/') + 1);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

const std::vector<KokkosOption>& kokkos_options() {
  static const std::vector<KokkosOption> options = {
      {"--kokkos-num-threads", "=N", "host threads (OpenMP/Threads backends; Kokkos 4)"},
      {"--kokkos-threads", "=N", "host threads (Kokkos 3)"},
      {"--kokkos-numa", "=N", "NUMA regions (Kokkos 3)"},
      {"--kokkos-device-id", "=N", "the GPU this rank uses"},
      {"--kokkos-device", "=N", "the GPU this rank uses (Kokkos 3)"},
      {"--kokkos-num-devices", "=N[,K]", "GPUs per node to spread ranks over (skip device K)"},
      {"--kokkos-ndevices", "=N[,K]", "the same (Kokkos 3)"},
      {"--kokkos-skip-device", "=K", "a GPU to leave out (Kokkos 3)"},
      {"--kokkos-map-device-id-by", "=random|mpi_rank", "how ranks pick a GPU (Kokkos 4)"},
      {"--kokkos-disable-warnings", "", "silence Kokkos' warnings"},
      {"--kokkos-print-configuration", "", "print Kokkos' configuration (Kokkos 4)"},
      {"--kokkos-tune-internals", "", "let Kokkos Tools tune internal parameters (Kokkos 4)"},
      {"--kokkos-tools-libs", "=LIB", "Kokkos Tools libraries to load (Kokkos 4)"},
      {"--kokkos-tools-library", "=LIB", "the same (Kokkos 3)"},
      {"--kokkos-tools-args", "=ARGS", "arguments for the Kokkos Tools"},
      {"--kokkos-tools-help", "", "the Kokkos Tools' help"},
      {"--kokkos-help", "", "Kokkos' own help"},
  };
  return options;
}

std::string usage_line(const std::string& program, bool deck_required) {
  return concat("usage: ", program, deck_required ? " DECK.yaml" : " [DECK.yaml]",
                " [--set key.sub=value]... [--out DIR] [--help] [--version]");
}


bool help_or_version(const std::string& arg, bool& help, bool& version) {
  if (arg == "-h" || arg == "--help") help = true;
  if (arg == "--version") version = true;
  return arg == "-h" || arg == "--help" || arg == "--version";
}

std::optional<std::string> option_value(int argc, char** argv, int& i, const std::string& name,
                                        const std::function<UserError(const std::string&)>& fail) {
  const std::string arg = argv[i];
  std::string value;
  if (starts_with(arg, name + "=")) {
    value = arg.substr(name.size() + 1);
  } else if (arg != name) {
    return std::nullopt;
  } else if (i + 1 < argc) {
    value = argv[++i];
  } else {
    throw fail(concat(name, " needs a value"));
  }
  if (value.empty()) throw fail(concat(name, " needs a non-empty value"));
  return value;
}

CommandLine parse_command_line(int argc, char** argv, bool deck_required,
                               const std::vector<std::string>& shorthands) {
  const std::string program = program_name(argc, argv);
  const auto fail = [&](const std::string& problem) {
    return UserError(concat(problem, "\n", usage_line(program, deck_required), "\n(run '", program,
                            " --help' for the deck keys)"));
  };
  CommandLine line;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (help_or_version(arg, line.help, line.version)) {
      continue;
    } else if (auto assignment = option_value(argc, argv, i, "--set", fail)) {
      line.overrides.push_back(*assignment);
    } else if (auto out_dir = option_value(argc, argv, i, "--out", fail)) {
      line.out_dir = *out_dir;
    } else if (const auto name = std::find_if(shorthands.begin(), shorthands.end(),
                                              [&](const std::string& n) {
                                                return arg == "--" + n ||
                                                       starts_with(arg, "--" + n + "=");
                                              });
               name != shorthands.end()) {
      line.overrides.push_back(*name + "=" + *option_value(argc, argv, i, "--" + *name, fail));
    } else if (starts_with(arg, "--kokkos-")) {
      // Kokkos::initialize reads these (some Kokkos versions leave them in argv), but ignores
      // names it does not know: a misspelt one would be lost without a word.
      const std::string name = arg.substr(0, arg.find('='));
      const auto& known = kokkos_options();
      if (std::none_of(known.begin(), known.end(),
                       [&](const KokkosOption& o) { return name == o.name; })) {
        std::string names;
        for (const KokkosOption& o : known) names += concat(names.empty() ? "" : ", ", o.name);
        throw fail(concat("unknown Kokkos option '", name, "'; Kokkos options: ", names));
      }
    } else if (starts_with(arg, "-") && arg != "-") {
      throw fail(concat("unknown option '", arg, "'"));
    } else if (!line.deck_path.empty()) {
      throw fail(concat("more than one deck given: '", line.deck_path, "' and '", arg, "'"));
    } else {
      line.deck_path = arg;
    }
  }
  if (deck_required && line.deck_path.empty() && !line.help && !line.version)
    throw fail("no deck given");
  return line;
}

bool wants_version(int argc, char** argv) {
  try {
    return parse_command_line(argc, argv, /*deck_required=*/false).version;
  } catch (const UserError&) {
    return false;  // a bad command line is reported by the normal path, on every rank alike
  }
}

}  // namespace meshslice
