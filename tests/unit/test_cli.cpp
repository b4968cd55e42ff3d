// Command-line parsing and default-deck lookup.
#include <unistd.h>

#include "core/app.hpp"
#include "core/cli.hpp"
#include "test_support.hpp"

namespace meshslice {
namespace {

using test::expect_contains;
using test::ScratchDir;
using test::user_error_of;

CommandLine parse(std::vector<std::string> args, bool deck_required = true) {
  args.insert(args.begin(), "/some/build/bin/meshslice-test");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return parse_command_line(static_cast<int>(args.size()), argv.data(), deck_required);
}

std::string parse_error(const std::vector<std::string>& args, bool deck_required = true) {
  return user_error_of([&] { parse(args, deck_required); });
}

TEST(CommandLine, DeckOverridesAndOutputDirectory) {
  const CommandLine line =
      parse({"deck.yaml", "--set", "mesh.rows=4", "--set=sizes=1,2", "--out", "results"});
  EXPECT_EQ(line.deck_path, "deck.yaml");
  EXPECT_EQ(line.overrides, (std::vector<std::string>{"mesh.rows=4", "sizes=1,2"}));
  EXPECT_EQ(line.out_dir, "results");
  EXPECT_FALSE(line.help);
}

TEST(CommandLine, DefaultsAndEqualsForms) {
  EXPECT_EQ(parse({"deck.yaml"}).out_dir, "out");
  EXPECT_EQ(parse({"--out=runs/a", "deck.yaml"}).out_dir, "runs/a");
  EXPECT_EQ(parse({"deck.yaml", "--set=label=x=y"}).overrides,
            (std::vector<std::string>{"label=x=y"}));
}

TEST(CommandLine, HelpNeedsNoDeck) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"deck.yaml", "-h"}).help);
}

TEST(CommandLine, KokkosArgumentsAreLeftToKokkos) {
  const CommandLine line = parse({"--kokkos-num-threads=2", "deck.yaml"});
  EXPECT_EQ(line.deck_path, "deck.yaml");
}

TEST(CommandLine, UnknownOptionGetsAUsageHint) {
  expect_contains(parse_error({"deck.yaml", "--bogus"}),
                  {"unknown option '--bogus'",
                   "usage: meshslice-test DECK.yaml [--set key.sub=value]... [--out DIR] [--help]",
                   "meshslice-test --help"});
  expect_contains(parse_error({"-x", "deck.yaml"}), {"unknown option '-x'"});
}

TEST(CommandLine, MissingDeckOrValues) {
  expect_contains(parse_error({}), {"no deck given", "usage: meshslice-test DECK.yaml"});
  expect_contains(parse_error({"--set", "a=1"}), {"no deck given"});
  expect_contains(parse_error({"deck.yaml", "--set"}), {"--set needs a value"});
  expect_contains(parse_error({"deck.yaml", "--out"}), {"--out needs a value"});
  expect_contains(parse_error({"deck.yaml", "--out="}), {"--out needs a non-empty value"});
  expect_contains(parse_error({"a.yaml", "b.yaml"}),
                  {"more than one deck given: 'a.yaml' and 'b.yaml'"});
}

TEST(CommandLine, DeckOptionalWhenTheAppHasADefault) {
  const CommandLine line = parse({"--out", "o"}, /*deck_required=*/false);
  EXPECT_TRUE(line.deck_path.empty());
  expect_contains(parse_error({"--what"}, false), {"usage: meshslice-test [DECK.yaml]"});
}

// Runs `action` with `dir` as the current directory, restoring the old one afterwards.
void in_directory(const std::filesystem::path& dir, const std::function<void()>& action) {
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  try {
    action();
  } catch (...) {
    std::filesystem::current_path(previous);
    throw;
  }
  std::filesystem::current_path(previous);
}

TEST(DefaultDeck, FoundUnderInputsOfTheCurrentDirectory) {
  ScratchDir dir;
  dir.write("inputs/demo/laptop.yaml", "repetitions: 1\n");
  in_directory(dir.path(), [] {
    EXPECT_EQ(resolve_default_deck("demo/laptop.yaml"), "inputs/demo/laptop.yaml");
  });
}

TEST(DefaultDeck, MissingDeckListsWhereItLooked) {
  ScratchDir dir;
  in_directory(dir.path(), [] {
    expect_contains(user_error_of([] { resolve_default_deck("demo/no-such-deck.yaml"); }),
                    {"default deck inputs/demo/no-such-deck.yaml not found",
                     "inputs/demo/no-such-deck.yaml", "give a deck path on the command line"});
  });
}

}  // namespace
}  // namespace meshslice
