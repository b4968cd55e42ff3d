#include "core/app.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/agreement.hpp"
#include "core/blas_kernels.hpp"
#include "core/cli.hpp"
#include "core/deck.hpp"
#include "core/device_work_counter.hpp"
#include "core/errors.hpp"
#include "core/flight_recorder.hpp"
#include "core/json.hpp"
#include "core/mpi_io_workaround.hpp"
#include "core/output_file.hpp"
#include "core/subnormals.hpp"
#include "core/version.hpp"
#include "hardware/install_layout.hpp"

namespace meshslice {

namespace fs = std::filesystem;

namespace {

void print_user_error(const std::string& app, const std::string& message, int rank) {
  std::cerr << app << ": error: " << message;
  if (rank != 0) std::cerr << " (on rank " << rank << ")";
  std::cerr << std::endl;
}

// Setup steps can fail on some ranks only (a deck on a file system one node cannot see, an
// output directory only rank 0 creates). Every rank calls this with its own error ("" for
// none); if any rank failed, the lowest failing rank prints its message and all return false,
// so that no rank goes on into a collective its peers never reach.
bool all_ranks_ok(const std::string& error, const std::string& app, int rank, int size) {
  const int mine = error.empty() ? size : rank;
  int first_failed = size;
  MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failed == rank) print_user_error(app, error, rank);
  return first_failed == size;
}

std::string describe_sources(const std::string& deck_path, const CommandLine& line) {
  std::string text = concat("deck ", deck_path);
  for (const auto& o : line.overrides) text += " --set " + o;
  return text;
}

// One assignment a shorthand stands for, with its {} replaced by `value`.
std::string expanded(std::string assignment, const std::string& value) {
  const auto at = assignment.find("{}");
  if (at != std::string::npos) assignment.replace(at, 2, value);
  return assignment;
}

// The --set assignments with each shorthand NAME=VALUE replaced by what it stands for.
std::vector<std::string> expand_shorthands(const std::vector<std::string>& overrides,
                                           const std::vector<AppSpec::Shorthand>& shorthands) {
  std::vector<std::string> out;
  for (const std::string& assignment : overrides) {
    const auto equals = assignment.find('=');
    const auto shorthand =
        std::find_if(shorthands.begin(), shorthands.end(), [&](const AppSpec::Shorthand& s) {
          return equals != std::string::npos && assignment.compare(0, equals, s.name) == 0 &&
                 s.name.size() == equals;
        });
    if (shorthand == shorthands.end()) {
      out.push_back(assignment);
      continue;
    }
    const std::string value = assignment.substr(equals + 1);
    for (const std::string& stands_for : shorthand->expands_to)
      out.push_back(expanded(stands_for, value));
  }
  return out;
}

// UserError when the deck or an override uses a key the app renamed.
void check_renamed(const Teuchos::ParameterList& deck, const std::vector<std::string>& overrides,
                   const std::vector<AppSpec::Renamed>& renamed) {
  for (const auto& r : renamed) {
    const auto message = [&](const std::string& where) {
      return UserError(concat(where, "deck key '", r.old_key, "' was renamed '", r.new_key, "' (",
                              r.why, "): set ", r.new_key, " instead"));
    };
    if (find_entry_if_any(deck, r.old_key)) throw message("");
    for (const std::string& assignment : overrides)
      if (assignment.compare(0, assignment.find('='), r.old_key) == 0)
        throw message(concat("--set ", assignment, ": "));
  }
}

// Parses the command line and loads, overrides and validates the deck into ctx.
// Returns false when --help was asked for (printed here on rank 0).
bool prepare(int argc, char** argv, const AppSpec& spec, AppContext& ctx, std::string& sources) {
  std::vector<std::string> shorthand_names;
  for (const auto& shorthand : spec.shorthands) shorthand_names.push_back(shorthand.name);
  const CommandLine line =
      parse_command_line(argc, argv, spec.default_deck.empty(), shorthand_names);
  const Teuchos::ParameterList valid = spec.valid_parameters();
  if (line.help) {
    if (ctx.rank != 0) return false;
    print_help(std::cout, spec.name, spec.summary, valid, spec.default_deck);
    if (!spec.shorthands.empty()) std::cout << "\nShorthands:\n";
    for (const auto& shorthand : spec.shorthands) {
      std::cout << "  --" << shorthand.name << " VALUE (or --set " << shorthand.name
                << "=VALUE)  means";
      for (const std::string& stands_for : shorthand.expands_to)
        std::cout << " --set " << expanded(stands_for, "VALUE");
      std::cout << "\n";
    }
    for (const auto& r : spec.renamed)
      std::cout << (&r == &spec.renamed.front() ? "\nRenamed keys:\n" : "") << "  " << r.old_key
                << " is now " << r.new_key << " (" << r.why << ")\n";
    return false;
  }
  const std::string deck_path =
      line.deck_path.empty() ? resolve_default_deck(spec.default_deck) : line.deck_path;
  ctx.deck = load_deck(deck_path);
  check_renamed(ctx.deck, line.overrides, spec.renamed);
  const bool empty_deck = ctx.deck.numParams() == 0;
  for (const auto& assignment : expand_shorthands(line.overrides, spec.shorthands))
    apply_override(ctx.deck, valid, assignment);
  validate_and_fill(ctx.deck, valid);
  ctx.out_dir = line.out_dir;
  sources = describe_sources(deck_path, line);
  // An empty file (or one of comments only) is a valid deck, but rarely meant: say so.
  if (empty_deck) sources += " (the deck is empty: every key not --set takes its default)";
  return true;
}

// The run's description beside its results: OUT/deck.yaml (the resolved deck) and
// OUT/version.json (the build, core/version.hpp). Written at start-up as partial files and put
// under their names only when the run succeeds, so a failed run into a used --out leaves the
// previous run's description next to the previous run's results.
struct RunDescription {
  std::unique_ptr<OutputFile> deck, version;
  void commit() {
    deck->commit();
    version->commit();
  }
};

// OUT/NAME holding `text`, written but not yet under its name.
std::unique_ptr<OutputFile> staged(const AppContext& ctx, const char* name,
                                   const std::string& text) {
  auto file = std::make_unique<OutputFile>((fs::path(ctx.out_dir) / name).string());
  file->stream() << text;
  file->flush();
  return file;
}

// OUT/version.json: {"app": ..., "build": {the facts of --version}}.
std::string version_file_text(const std::string& app) {
  json::Value version = json::Value::object();
  version.set("app", app);
  version.set("build", version_json());
  return version.dump(2) + "\n";
}

RunDescription write_outputs(const AppContext& ctx, const std::string& sources) {
  std::error_code ec;
  fs::create_directories(ctx.out_dir, ec);
  require(!ec, "cannot create output directory '", ctx.out_dir, "': ", ec.message());
  return {staged(ctx, "deck.yaml",
                 deck_yaml_text(ctx.deck,
                                concat("Resolved deck: every parameter after defaults and --set "
                                       "overrides.\n",
                                       ctx.app_name, ", ", sources, "\n", version_line()))),
          staged(ctx, "version.json", version_file_text(ctx.app_name))};
}

// The rank a launcher gave this process, from its environment: --version is answered before
// MPI_Init, and `srun app --version` should print once. 0 when no launcher variable is set.
int launcher_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

int run_guarded(int argc, char** argv, const AppSpec& spec,
                const std::function<int(AppContext&)>& body) {
  AppContext ctx;
  ctx.app_name = spec.name;
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx.size);
  try {
    std::string error, sources;
    bool run = false;
    try {
      run = prepare(argc, argv, spec, ctx, sources);
    } catch (const UserError& e) {
      error = e.what();
    }
    if (!all_ranks_ok(error, spec.name, ctx.rank, ctx.size)) return 2;
    if (!run) return 0;
    require_agreement(MPI_COMM_WORLD, inputs_to_agree_on(ctx.deck));

    RunDescription description;
    if (ctx.rank == 0) {
      try {
        description = write_outputs(ctx, sources);
      } catch (const std::runtime_error& e) {  // UserError or RankLocalError: agreed on below
        error = e.what();
      }
    }
    if (!all_ranks_ok(error, spec.name, ctx.rank, ctx.size)) return 2;
    log_info(version_line());
    if (const std::string blas = blas_kernels(); !blas.empty()) log_info("BLAS: ", blas);
    log_info(sources, "; resolved deck in ", (fs::path(ctx.out_dir) / "deck.yaml").string());

    const int status = body(ctx);
    if ((status == 0 || status == kExitResumable) && ctx.rank == 0) description.commit();
    return status;
  } catch (const UserError& e) {
    // Every rank evaluated the same check and threw the same error (see core/errors.hpp).
    if (ctx.rank == 0) print_user_error(spec.name, e.what(), 0);
    return 2;
  } catch (const RankLocalError& e) {
    print_user_error(spec.name, e.what(), ctx.rank);
    std::cerr << std::flush;
    // Peers may be waiting in a collective for this rank: only an abort ends them all.
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << spec.name << ": internal error on rank " << ctx.rank << ": " << e.what()
              << std::endl;
  } catch (...) {
    std::cerr << spec.name << ": internal error on rank " << ctx.rank << ": unknown exception"
              << std::endl;
  }
  // Peers may be waiting in a collective for this rank: only an abort ends them all.
  MPI_Abort(MPI_COMM_WORLD, 3);
  return 3;
}

}  // namespace

int run_app(int argc, char** argv, const AppSpec& spec,
            const std::function<int(AppContext&)>& body) {
  // Versions need no MPI, Kokkos or deck, so --version also works where MPI cannot start (a
  // login node) and says which Kokkos a binary was built with before it tries to initialize it.
  if (wants_version(argc, argv)) {
    if (launcher_rank() == 0) std::cout << spec.name << "\n" << version_text() << std::flush;
    return 0;
  }
  avoid_fallback_blas_kernels();  // the GEMMs' speed (core/blas_kernels.hpp)
  int mpi_ready = 0;
  MPI_Initialized(&mpi_ready);
  if (!mpi_ready) {
    avoid_broken_mpi_io();  // checkpoints (core/mpi_io_workaround.hpp)
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  }
  const bool owns_kokkos = !Kokkos::is_initialized();
  if (owns_kokkos) {
    // Kokkos 3 also acts on unprefixed arguments (--help prints its own help, --threads ...),
    // so it sees only the program name and the --kokkos-* arguments.
    std::vector<char*> kokkos_argv{argv[0]};
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]).rfind("--kokkos-", 0) == 0) kokkos_argv.push_back(argv[i]);
    }
    int kokkos_argc = static_cast<int>(kokkos_argv.size());
    kokkos_argv.push_back(nullptr);
    // Counting what the device runs (core/device_work_counter.hpp) is set up before Kokkos
    // starts unless a tools library is named: a library loaded later would replace some of
    // the callbacks and keep others.
    bool tools_library = std::getenv("KOKKOS_TOOLS_LIBS") || std::getenv("KOKKOS_PROFILE_LIBRARY");
    for (int i = 1; i < kokkos_argc; ++i)
      tools_library =
          tools_library || std::string(kokkos_argv[i]).rfind("--kokkos-tools-lib", 0) == 0;
    if (!tools_library) install_device_work_counter();
    Kokkos::initialize(kokkos_argc, kokkos_argv.data());
  }
  flush_subnormals_on_host_threads();  // the element-wise kernels' speed (core/subnormals.hpp)
  set_log_prefix(spec.name);

  const int exit_code = run_guarded(argc, argv, spec, body);
  FlightRecorder::instance().stop();  // its watchdog must not outlive MPI

  if (owns_kokkos) Kokkos::finalize();
  if (!mpi_ready) MPI_Finalize();
  return exit_code;
}

int run_on_rank_zero(const AppContext& ctx, const std::function<int()>& work) {
  int status = 0;
  if (ctx.rank == 0) {
    try {
      status = work();
    } catch (const UserError& e) {
      print_user_error(ctx.app_name, e.what(), 0);
      status = 2;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

std::string resolve_default_deck(const std::string& relative) {
  std::vector<fs::path> candidates{fs::path("inputs") / relative};
  if (const fs::path installed = hw::installed_data_dir(); !installed.empty())
    candidates.push_back(installed / "inputs" / relative);
  std::error_code ec;
  const fs::path executable = fs::read_symlink("/proc/self/exe", ec);  // Linux; skipped elsewhere
  if (!ec) candidates.push_back(executable.parent_path() / ".." / ".." / "inputs" / relative);
#ifdef MESHSLICE_SOURCE_DIR
  candidates.push_back(fs::path(MESHSLICE_SOURCE_DIR) / "inputs" / relative);
#endif
  std::string searched;
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
    searched += (searched.empty() ? "" : ", ") + candidate.lexically_normal().string();
  }
  throw UserError(concat("default deck inputs/", relative, " not found (looked in ", searched,
                         "); give a deck path on the command line"));
}

int run_serial_app(const char* name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UserError& e) {
    std::cerr << name << ": error: " << e.what() << std::endl;
  } catch (const RankLocalError& e) {
    std::cerr << name << ": error: " << e.what() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << e.what() << std::endl;
    return 3;
  }
  return 2;
}

}  // namespace meshslice
