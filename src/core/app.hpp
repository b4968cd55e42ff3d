#pragma once
// The runner every app's main() calls. It owns MPI and Kokkos, the command line, the deck and the
// error policy of core/errors.hpp, so an app is just its valid parameters and a body:
//
//     int main(int argc, char** argv) {
//       AppSpec spec{"meshslice-bench", "Times the collectives.", "bench/laptop.yaml",
//                    valid_bench_parameters, {}};
//       return run_app(argc, argv, spec, [](AppContext& ctx) { ...; return 0; });
//     }
#include <Teuchos_ParameterList.hpp>

#include <functional>
#include <string>
#include <vector>

#include "core/log.hpp"

namespace meshslice {

struct AppSpec {
  std::string name;     // executable name, prefix of every message
  std::string summary;  // one paragraph for --help
  // Deck used when none is given on the command line: a path relative to the inputs/ folder
  // (of the source tree, or <prefix>/share/meshslice/inputs when installed), found by
  // resolve_default_deck. Empty: a deck argument is required.
  std::string default_deck;
  // The valid parameters with defaults and doc strings (see core/deck.hpp).
  std::function<Teuchos::ParameterList()> valid_parameters;
  // Command-line shorthands: `--NAME VALUE` (or `--set NAME=VALUE`) stands for the assignments
  // of `expands_to`, in order, each with "{}" replaced by VALUE (meshslice-train: --plan PATH is
  // plan.source=file and plan.file=PATH). --help lists them.
  struct Shorthand {
    std::string name;
    std::vector<std::string> expands_to;
  };
  std::vector<Shorthand> shorthands;
  // Deck keys the app renamed ("checkpointing.blocks" -> "recompute.blocks"): using the old one
  // in the deck or a --set is an error that names the new one and why.
  struct Renamed {
    std::string old_key, new_key, why;
  };
  std::vector<Renamed> renamed;
};

// The exit status of a run a signal stopped early after saving its state (sysexits' EX_TEMPFAIL:
// try again): a batch script requeues the job with --resume auto.
constexpr int kExitResumable = 75;

struct AppContext {
  Teuchos::ParameterList deck;  // validated, defaults filled, overrides applied
  std::string out_dir;          // exists on rank 0's file system; holds deck.yaml
  int rank = 0;                 // in MPI_COMM_WORLD
  int size = 1;
  std::string app_name;
};

// With --version, prints the versions of meshslice and its dependencies (core/version.hpp) and
// returns 0 before starting anything. Otherwise initializes MPI (MPI_THREAD_FUNNELED) and Kokkos
// unless already initialized, parses the command line, prints --help on rank 0 (exit 0), loads
// the deck on every rank, applies --set overrides, validates, creates the output directory and
// stages OUT/deck.yaml and OUT/version.json on rank 0 (under their names once body succeeds),
// logs the version line, runs `body`, and finalizes what it initialized. Returns body's exit
// code, or:
//   2 on a UserError: printed once as "NAME: error: MESSAGE", every rank exits normally;
//   2 via MPI_Abort on a RankLocalError ("NAME: error: MESSAGE (on rank R)"): the peers may be
//     waiting for the failed rank, the abort ends every rank with a non-zero status;
//   3 via MPI_Abort on any other exception ("NAME: internal error on rank R: ...").
int run_app(int argc, char** argv, const AppSpec& spec,
            const std::function<int(AppContext&)>& body);

// Runs `work` on rank 0 alone (a single-process app: the emulator) while the other ranks wait,
// and returns its exit status on every rank: a UserError it throws is printed by rank 0 and
// every rank returns 2, so no rank exits 0 beside a failed run.
int run_on_rank_zero(const AppContext& ctx, const std::function<int()>& work);

// The error policy of an app of one process without MPI or Kokkos (meshslice-data,
// meshslice-export): returns body's exit status, or prints "NAME: error: MESSAGE" and returns 2
// on a UserError or a RankLocalError (an output file it cannot write), "NAME: internal error:
// ..." and 3 on any other exception.
int run_serial_app(const char* name, const std::function<int()>& body);

// Finds inputs/<relative>: under the current directory, then under the install prefix of the
// executable (<prefix>/bin -> <prefix>/share/meshslice/inputs), then ../../inputs from the
// executable (build/bin/ in the source tree), then the source tree the library was built from.
// A UserError lists the places searched when none has it.
std::string resolve_default_deck(const std::string& relative);

}  // namespace meshslice
