#include "core/cli.hpp"

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

std::string usage_line(const std::string& program, bool deck_required) {
  return concat("usage: ", program, deck_required ? " DECK.yaml" : " [DECK.yaml]",
                " [--set key.sub=value]... [--out DIR] [--help] [--version]");
}


CommandLine parse_command_line(int argc, char** argv, bool deck_required) {
  const std::string program = program_name(argc, argv);
  const auto fail = [&](const std::string& problem) {
    return UserError(concat(problem, "\n", usage_line(program, deck_required), "\n(run '", program,
                            " --help' for the deck keys)"));
  };
  CommandLine line;
  // Value of an option given as "--name=value" or as "--name value".
  const auto option_value = [&](const std::string& name, const std::string& arg, int& i) {
    std::string value;
    if (arg.size() > name.size()) {
      value = arg.substr(name.size() + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw fail(concat(name, " needs a value"));
    }
    if (value.empty()) throw fail(concat(name, " needs a non-empty value"));
    return value;
  };

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      line.help = true;
    } else if (arg == "--version") {
      line.version = true;
    } else if (arg == "--set" || starts_with(arg, "--set=")) {
      line.overrides.push_back(option_value("--set", arg, i));
    } else if (arg == "--out" || starts_with(arg, "--out=")) {
      line.out_dir = option_value("--out", arg, i);
    } else if (starts_with(arg, "--kokkos-")) {
      continue;  // Kokkos::initialize reads these; some Kokkos versions leave them in argv
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
