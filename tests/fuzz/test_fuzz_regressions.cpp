// Replays every kept fuzz input (tests/fuzz/regressions/deck, .../machine) through the same code
// path as the libFuzzer targets (deck_input.hpp, machine_input.hpp), in normal builds without
// fuzzer or sanitizers. Each input must be accepted or refused with the error type meant for the
// user; a crash, another exception type or a broken round trip fails the test. Add a file to a
// folder and it is replayed: no edit here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "deck_input.hpp"
#include "machine_input.hpp"

namespace meshslice::fuzz {
namespace {

namespace fs = std::filesystem;

// The regular files of regressions/<kind>, sorted so failures come in a stable order.
std::vector<fs::path> inputs_of(const std::string& kind) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(MESHSLICE_FUZZ_REGRESSIONS) / kind))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs every input of regressions/<kind>; `Expected` is the error type bad input may raise.
template <class Expected>
void replay(const std::string& kind, const std::function<void(const std::string&)>& run) {
  const std::vector<fs::path> files = inputs_of(kind);
  ASSERT_FALSE(files.empty()) << "no inputs in " << MESHSLICE_FUZZ_REGRESSIONS << "/" << kind;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    try {
      run(bytes_of(file));
    } catch (const Expected&) {
      // refused with a message for the user: the expected answer to bad input
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what();
    }
  }
}

TEST(FuzzRegressions, DeckInputsAreAcceptedOrRefusedWithAUserError) {
  replay<UserError>("deck", run_deck_input);
}

TEST(FuzzRegressions, MachineInputsAreAcceptedOrRefusedWithAMachineError) {
  replay<hw::MachineError>("machine", run_machine_input);
}

// The split the deck target applies: the deck, then one argument per line after `--`.
TEST(FuzzRegressions, DeckInputSplitsAtTheSeparatorLine) {
  const DeckInput input = split_deck_input("mesh:\n  rows: 2\n--\n--set\nmesh.cols=3\n");
  EXPECT_EQ(input.deck, "mesh:\n  rows: 2\n");
  EXPECT_EQ(input.args, (std::vector<std::string>{"--set", "mesh.cols=3"}));
  EXPECT_EQ(split_deck_input("a: 1\n---\n").deck, "a: 1\n---\n");
  EXPECT_TRUE(split_deck_input("a: 1\n---\n").args.empty());
}

}  // namespace
}  // namespace meshslice::fuzz
