// Input decks: loading, validation against the valid list, --set overrides, help text and the
// resolved-deck round trip. Error tests assert on the message, since the message is the product.
#include <Teuchos_XMLParameterListCoreHelpers.hpp>

#include <filesystem>
#include <sstream>

#include "core/deck.hpp"
#include "core/errors.hpp"
#include "core/output_file.hpp"
#include "test_support.hpp"

namespace meshslice {
namespace {

using test::expect_contains;
using test::ScratchDir;
using test::user_error_of;
using Teuchos::Array;
using Teuchos::ParameterList;

// Teuchos::Array has no initializer-list constructor in Trilinos 13.2.
template <class T>
Array<T> array_of(std::initializer_list<T> values) {
  return Array<T>(values.begin(), values.end());
}

// A valid list shaped like an app's: scalars of every type, a choice, arrays, nested sublists.
ParameterList valid_parameters() {
  ParameterList valid;
  valid.set("repetitions", 5, "timed repetitions per size");
  valid.set("tolerance", 1e-6, "relative error allowed against the reference");
  valid.set("verbose", false, "print every step");
  valid.set("label", std::string("run"), "name of the run");
  set_choice(valid, "algorithm", "meshslice", {"meshslice", "cannon", "summa"},
             "2D GEMM algorithm");
  valid.set("sizes", array_of<int>({1024, 2048}), "matrix sizes");
  valid.set("ratios", array_of<double>({0.5, 1.0}), "slice ratios");
  valid.set("axes", array_of<std::string>({"row", "col"}), "mesh axes to time");
  ParameterList& mesh = valid.sublist("mesh", false, "the device torus");
  mesh.set("rows", 2, "torus rows");
  mesh.set("cols", 2, "torus columns");
  mesh.set("dp", 1, "data-parallel replicas");
  mesh.set("pp", 1, "pipeline stages");
  ParameterList& link = mesh.sublist("link", false, "interconnect");
  link.set("bandwidth", 45.0, "GB/s per direction");
  return valid;
}

ParameterList parse(const std::string& yaml) { return parse_deck_yaml(yaml, "test.yaml"); }

ParameterList resolved(const std::string& yaml) {
  ParameterList deck = parse(yaml);
  validate_and_fill(deck, valid_parameters());
  return deck;
}

std::string validation_error(const std::string& yaml) {
  return user_error_of([&] { resolved(yaml); });
}

std::string override_error(const std::string& assignment) {
  ParameterList deck;
  return user_error_of([&] { apply_override(deck, valid_parameters(), assignment); });
}

// --- loading ---------------------------------------------------------------------------------

TEST(DeckLoad, ReadsNestedSublistsAndArraysFromAFile) {
  ScratchDir dir;
  const std::string path = dir.write("deck.yaml", "%YAML 1.1\n"
                                                  "---\n"
                                                  "# laptop demo\n"
                                                  "repetitions: 7\n"
                                                  "mesh:\n"
                                                  "  rows: 4\n"
                                                  "  link:\n"
                                                  "    bandwidth: 12.5\n"
                                                  "sizes: [64, 128, 256]\n"
                                                  "axes: [row, dp]\n"
                                                  "label: demo\n"
                                                  "...\n");
  const ParameterList deck = load_deck(path);
  EXPECT_EQ(deck.get<int>("repetitions"), 7);
  EXPECT_EQ(deck.sublist("mesh").get<int>("rows"), 4);
  EXPECT_DOUBLE_EQ(deck.sublist("mesh").sublist("link").get<double>("bandwidth"), 12.5);
  EXPECT_EQ(deck.get<Array<int>>("sizes"), array_of<int>({64, 128, 256}));
  EXPECT_EQ(deck.get<Array<std::string>>("axes"), array_of<std::string>({"row", "dp"}));
  EXPECT_EQ(deck.get<std::string>("label"), "demo");
}

TEST(DeckLoad, KeepsTopLevelScalarsNextToASublist) {
  // Plain Teuchos would take `mesh` as the list's name and drop `repetitions`.
  const ParameterList deck = parse("mesh:\n  rows: 3\nrepetitions: 9\n");
  EXPECT_EQ(deck.numParams(), 2);
  EXPECT_EQ(deck.get<int>("repetitions"), 9);
  EXPECT_EQ(deck.sublist("mesh").get<int>("rows"), 3);
}

TEST(DeckLoad, AcceptsTheTeuchosAnonymousForm) {
  const ParameterList deck =
      parse("%YAML 1.1\n---\nANONYMOUS:\n  repetitions: 3\n  mesh:\n    cols: 8\n...\n");
  EXPECT_EQ(deck.get<int>("repetitions"), 3);
  EXPECT_EQ(deck.sublist("mesh").get<int>("cols"), 8);
}

TEST(DeckLoad, ReadsXmlDecks) {
  ScratchDir dir;
  const std::string path =
      dir.write("deck.xml", "<ParameterList>\n"
                            "  <Parameter name=\"repetitions\" type=\"int\" value=\"11\"/>\n"
                            "  <ParameterList name=\"mesh\">\n"
                            "    <Parameter name=\"rows\" type=\"int\" value=\"6\"/>\n"
                            "  </ParameterList>\n"
                            "</ParameterList>\n");
  ParameterList deck = load_deck(path);
  validate_and_fill(deck, valid_parameters());
  EXPECT_EQ(get_param<int>(deck, "repetitions"), 11);
  EXPECT_EQ(get_param<int>(deck, "mesh.rows"), 6);
}

TEST(DeckLoad, EmptyDeckMeansAllDefaults) {
  const ParameterList deck = resolved("# nothing but a comment\n\n");
  EXPECT_EQ(get_param<int>(deck, "repetitions"), 5);
  EXPECT_EQ(get_param<int>(deck, "mesh.cols"), 2);
}

TEST(DeckLoad, MissingFileNamesTheFile) {
  const std::string message = user_error_of([] { load_deck("/nonexistent/dir/deck.yaml"); });
  expect_contains(message, {"cannot open deck file '/nonexistent/dir/deck.yaml'"});
}

TEST(DeckLoad, ParseErrorNamesTheFileAndTheUsersLine) {
  ScratchDir dir;
  const std::string path = dir.write("broken.yaml", "repetitions: 3\nsizes: [1, 2\nlabel: x\n");
  const std::string message = user_error_of([&] { load_deck(path); });
  expect_contains(message, {path + ":3:1: invalid YAML: expected ',' or ']' but found a line break",
                            "3 | label: x"});
  for (const char* internal : {"Throw test", "Parser was in state", "Lexer text", "NEWLINE"})
    EXPECT_EQ(message.find(internal), std::string::npos) << message;
}

TEST(DeckLoad, XmlParseErrorNamesTheFile) {
  ScratchDir dir;
  const std::string path = dir.write("broken.xml", "<ParameterList><Parameter name=\"a\"\n");
  expect_contains(user_error_of([&] { load_deck(path); }), {"cannot parse deck '" + path + "'"});
}

// --- validation ------------------------------------------------------------------------------

TEST(DeckValidate, FillsDefaultsRecursivelyInValidOrder) {
  const ParameterList deck = resolved("mesh:\n  cols: 8\nlabel: mine\n");
  EXPECT_EQ(get_param<int>(deck, "repetitions"), 5);
  EXPECT_EQ(get_param<std::string>(deck, "label"), "mine");
  EXPECT_EQ(get_param<int>(deck, "mesh.cols"), 8);
  EXPECT_EQ(get_param<int>(deck, "mesh.rows"), 2);
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "mesh.link.bandwidth"), 45.0);
  EXPECT_EQ(get_ints(deck, "sizes"), (std::vector<int>{1024, 2048}));
  EXPECT_EQ(get_strings(deck, "axes"), (std::vector<std::string>{"row", "col"}));
  EXPECT_EQ(get_param<std::string>(deck, "algorithm"), "meshslice");
  std::vector<std::string> order;  // resolved decks list keys as the valid list does
  for (auto it = deck.begin(); it != deck.end(); ++it) order.push_back(deck.name(it));
  EXPECT_EQ(order, (std::vector<std::string>{"repetitions", "tolerance", "verbose", "label",
                                             "algorithm", "sizes", "ratios", "axes", "mesh"}));
}

TEST(DeckValidate, UnknownKeyNamesDottedKeyAndListsValidKeys) {
  EXPECT_EQ(validation_error("mesh:\n  rowz: 4\n"),
            "deck key 'mesh.rowz' is unknown; valid keys in 'mesh': cols, dp, link, pp, rows "
            "(see --help). Did you mean 'mesh.rows'?");
}

TEST(DeckValidate, UnknownTopLevelKeyWithoutNearMiss) {
  const std::string message = validation_error("zzzzzz: 1\n");
  expect_contains(message,
                  {"deck key 'zzzzzz' is unknown; valid top-level keys: algorithm, axes, "
                   "label, mesh, ratios, repetitions, sizes, tolerance, verbose (see --help)"});
  EXPECT_EQ(message.find("Did you mean"), std::string::npos) << message;
}

TEST(DeckValidate, UnknownKeyDeepInside) {
  expect_contains(validation_error("mesh:\n  link:\n    bandwith: 3.0\n"),
                  {"'mesh.link.bandwith' is unknown", "valid keys in 'mesh.link': bandwidth",
                   "Did you mean 'mesh.link.bandwidth'?"});
}

TEST(DeckValidate, WrongScalarTypeNamesKeyExpectedAndGiven) {
  EXPECT_EQ(validation_error("mesh:\n  rows: four\n"),
            "deck key 'mesh.rows' expects int, but string 'four' was given");
  EXPECT_EQ(validation_error("repetitions: 2.5\n"),
            "deck key 'repetitions' expects int, but double 2.5 was given");
  expect_contains(validation_error("label: 42\n"),
                  {"deck key 'label' expects string, but int 42 was given", "quotes"});
  expect_contains(validation_error("verbose: maybe\n"),
                  {"deck key 'verbose' expects bool, but string 'maybe' was given"});
}

TEST(DeckValidate, SublistAndValueMixUps) {
  EXPECT_EQ(validation_error("repetitions:\n  a: 1\n"),
            "deck key 'repetitions' expects int, but a sublist was given");
  EXPECT_EQ(
      validation_error("mesh: 4\n"),
      "deck key 'mesh' must be a sublist with keys cols, dp, link, pp, rows, but int 4 was given");
  EXPECT_EQ(validation_error("repetitions:\n"),
            "deck key 'repetitions' expects int, but nothing (the key has no value) was given");
}

TEST(DeckValidate, ArrayTypes) {
  expect_contains(validation_error("sizes: 4.5\n"),
                  {"deck key 'sizes' expects int array, but double 4.5 was given", "[a, b, c]"});
  expect_contains(validation_error("sizes: [1.5, 2]\n"),
                  {"deck key 'sizes' expects int array, but double array [1.5, 2.0] was given"});
  expect_contains(validation_error("axes: [1, 2]\n"), {"expects string array, but int array"});
}

// A scalar where an array is expected reads as --set reads it, so the deck and the command line
// accept the same values.
TEST(DeckValidate, AScalarForAnArrayKeyReadsAsSetReadsIt) {
  using IntArray = Teuchos::Array<int>;
  EXPECT_EQ(resolved("sizes: 4\n").get<IntArray>("sizes"), IntArray(1, 4));
  EXPECT_EQ(resolved("sizes: '1,2'\n").get<IntArray>("sizes").size(), 2u);
  EXPECT_EQ(resolved("axes: row\n").get<Teuchos::Array<std::string>>("axes").size(), 1u);
  ParameterList from_set;
  apply_override(from_set, valid_parameters(), "sizes=4");
  validate_and_fill(from_set, valid_parameters());
  EXPECT_EQ(from_set.get<IntArray>("sizes"), resolved("sizes: 4\n").get<IntArray>("sizes"));
}

TEST(DeckValidate, IntsAreAcceptedWhereDoublesAreExpected) {
  const ParameterList deck =
      resolved("tolerance: 1\nratios: [1, 2]\nmesh:\n  link:\n    bandwidth: 50\n");
  EXPECT_TRUE(find_entry(deck, "tolerance").isType<double>());
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "tolerance"), 1.0);
  EXPECT_EQ(get_doubles(deck, "ratios"), (std::vector<double>{1.0, 2.0}));
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "mesh.link.bandwidth"), 50.0);
}

TEST(DeckValidate, BoolWords) {
  EXPECT_TRUE(get_param<bool>(resolved("verbose: true\n"), "verbose"));
  EXPECT_TRUE(get_param<bool>(resolved("verbose: yes\n"), "verbose"));
  EXPECT_FALSE(get_param<bool>(resolved("verbose: off\n"), "verbose"));
}

TEST(DeckValidate, ChoiceOutsideTheAllowedSet) {
  EXPECT_EQ(validation_error("algorithm: fox\n"),
            "deck key 'algorithm' is 'fox'; choose one of: meshslice, cannon, summa");
  EXPECT_EQ(get_param<std::string>(resolved("algorithm: summa\n"), "algorithm"), "summa");
}

TEST(DeckValidate, ChoiceDefaultMustBeAChoice) {
  ParameterList valid;
  EXPECT_THROW(set_choice(valid, "algorithm", "fox", {"a", "b"}, "doc"), std::invalid_argument);
}

// --- overrides -------------------------------------------------------------------------------

TEST(DeckOverride, ParsesByTheValidType) {
  ParameterList deck = parse("mesh:\n  rows: 4\n");
  const ParameterList valid = valid_parameters();
  for (const char* assignment :
       {"repetitions=12", "tolerance=1e-3", "verbose=on", "label=a b=c", "sizes=[8, 16,32]",
        "ratios=1,2.5", "axes=dp,pp", "mesh.cols=16", "mesh.link.bandwidth=7"}) {
    apply_override(deck, valid, assignment);
  }
  validate_and_fill(deck, valid);
  EXPECT_EQ(get_param<int>(deck, "repetitions"), 12);
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "tolerance"), 1e-3);
  EXPECT_TRUE(get_param<bool>(deck, "verbose"));
  EXPECT_EQ(get_param<std::string>(deck, "label"), "a b=c");
  EXPECT_EQ(get_ints(deck, "sizes"), (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(get_doubles(deck, "ratios"), (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(get_strings(deck, "axes"), (std::vector<std::string>{"dp", "pp"}));
  EXPECT_EQ(get_param<int>(deck, "mesh.rows"), 4);  // untouched by the overrides of its siblings
  EXPECT_EQ(get_param<int>(deck, "mesh.cols"), 16);
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "mesh.link.bandwidth"), 7.0);
}

TEST(DeckOverride, BoolWordsAndEmptyArrays) {
  const ParameterList valid = valid_parameters();
  const std::vector<std::pair<std::string, bool>> words = {
      {"true", true},   {"1", true},  {"YES", true}, {"on", true},
      {"false", false}, {"0", false}, {"no", false}, {"Off", false}};
  for (const auto& [word, value] : words) {
    ParameterList deck;
    apply_override(deck, valid, "verbose=" + word);
    EXPECT_EQ(deck.get<bool>("verbose"), value) << word;
  }
  ParameterList deck;
  apply_override(deck, valid, "sizes=[]");
  apply_override(deck, valid, "ratios=");
  EXPECT_TRUE(deck.get<Array<int>>("sizes").empty());
  EXPECT_TRUE(deck.get<Array<double>>("ratios").empty());
}

TEST(DeckOverride, ReplacesDeckValues) {
  ParameterList deck = parse("repetitions: 3\n");
  apply_override(deck, valid_parameters(), "repetitions=4");
  EXPECT_EQ(deck.get<int>("repetitions"), 4);
}

TEST(DeckOverride, UnparsableValuesNameKeyAndType) {
  EXPECT_EQ(override_error("mesh.rows=four"),
            "--set mesh.rows=four: deck key 'mesh.rows' expects int, cannot read 'four'");
  expect_contains(override_error("repetitions=3.5"), {"expects int, cannot read '3.5'"});
  expect_contains(override_error("repetitions=99999999999"), {"expects int"});
  expect_contains(override_error("tolerance=1e-3x"), {"'tolerance' expects double"});
  expect_contains(override_error("verbose=maybe"),
                  {"'verbose' expects bool (true/false/1/0/yes/no/on/off), cannot read 'maybe'"});
  expect_contains(override_error("sizes=1,x,3"),
                  {"'sizes' expects int array (e.g. 1,2,4 or [1,2,4]), cannot read '1,x,3'"});
  expect_contains(override_error("axes=a,,b"), {"'axes' expects string array"});
}

TEST(DeckOverride, UnknownKeysAndBadShapes) {
  EXPECT_EQ(override_error("mesh.rowz=4"),
            "--set mesh.rowz=4: deck key 'mesh.rowz' is unknown; valid keys in 'mesh': cols, dp, "
            "link, pp, rows (see --help). Did you mean 'mesh.rows'?");
  expect_contains(override_error("repetitions"),
                  {"--set 'repetitions' must look like key.sub=value"});
  expect_contains(override_error("=4"), {"must look like key.sub=value"});
  expect_contains(override_error("mesh=4"),
                  {"deck key 'mesh' is a sublist; set one of its keys: cols, dp, link, pp, rows"});
  expect_contains(override_error("repetitions.x=4"),
                  {"'repetitions' holds int, not a sublist, so 'repetitions.x' does not exist"});
  expect_contains(override_error("algorithm=fox"),
                  {"--set algorithm=fox: deck key 'algorithm' is 'fox'; choose one of: meshslice, "
                   "cannon, summa"});
}

TEST(DeckOverride, DeckValueWhereSublistIsNeeded) {
  ParameterList deck = parse("mesh: 3\n");
  expect_contains(user_error_of([&] { apply_override(deck, valid_parameters(), "mesh.rows=2"); }),
                  {"deck key 'mesh' must be a sublist, but the deck gives int 3"});
}

// --- typed getters ---------------------------------------------------------------------------

TEST(DeckGet, DottedKeysAndProgrammingErrors) {
  const ParameterList deck = resolved("");
  EXPECT_DOUBLE_EQ(get_param<double>(deck, "mesh.link.bandwidth"), 45.0);
  EXPECT_EQ(get_param<ParameterList>(deck, "mesh").get<int>("dp"), 1);
  EXPECT_THROW(get_param<int>(deck, "mesh.nope"), std::logic_error);
  EXPECT_THROW(get_param<int>(deck, "nope.rows"), std::logic_error);
  EXPECT_THROW(get_param<double>(deck, "mesh.rows"), std::logic_error);
  EXPECT_THROW(get_ints(deck, "ratios"), std::logic_error);
}

// --- help ------------------------------------------------------------------------------------

TEST(DeckHelp, ListsEveryKeyWithTypeDefaultDocAndChoices) {
  std::ostringstream out;
  print_help(out, "meshslice-test", "Tests the deck.", valid_parameters());
  const std::string help = out.str();
  expect_contains(help,
                  {"usage: meshslice-test DECK.yaml [--set key.sub=value]... [--out DIR] [--help]",
                   "Tests the deck.", "the device torus", "mesh.link.bandwidth", "45.0",
                   "GB/s per direction", "1e-06", "[1024, 2048]", "[row, col]",
                   "[one of: meshslice, cannon, summa]"});
  // Columns line up: the doc of every key row starts in the same column as DESCRIPTION.
  std::istringstream lines(help);
  std::size_t doc_column = std::string::npos;
  int rows_checked = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("DESCRIPTION") != std::string::npos) doc_column = line.find("DESCRIPTION");
    for (const char* doc : {"timed repetitions per size", "torus rows", "GB/s per direction"}) {
      if (line.find(doc) != std::string::npos) {
        EXPECT_EQ(line.find(doc), doc_column) << line;
        ++rows_checked;
      }
    }
    if (line.find("  repetitions ") == 1) expect_contains(line, {"int", "5"});
  }
  EXPECT_EQ(rows_checked, 3) << help;
}

TEST(DeckHelp, OverlongDefaultPutsTheDescriptionOnTheNextLine) {
  ParameterList valid;
  valid.set("n", 1, "short one");
  valid.set("ops", array_of<std::string>({"all_gather", "reduce_scatter", "all_reduce"}),
            "collectives to time");
  std::ostringstream out;
  print_help(out, "meshslice-test", "", valid);
  const std::string help = out.str();
  const auto short_doc = help.find("short one");
  const std::size_t doc_column = short_doc - help.rfind('\n', short_doc) - 1;
  expect_contains(help, {"[all_gather, reduce_scatter, all_reduce]\n" +
                         std::string(doc_column, ' ') + "collectives to time\n"});
}

TEST(DeckHelp, DefaultDeckMakesTheDeckOptional) {
  std::ostringstream out;
  print_help(out, "meshslice-test", "", valid_parameters(), "demo/laptop.yaml");
  expect_contains(out.str(), {"usage: meshslice-test [DECK.yaml]", "inputs/demo/laptop.yaml"});
}

// --- resolved deck round trip ----------------------------------------------------------------

TEST(DeckWrite, RoundTripKeepsValuesAndTypes) {
  ParameterList valid = valid_parameters();
  valid.set("switch", std::string("on"), "a string that looks like a bool");
  valid.set("code", std::string("2"), "a string that looks like a number");
  valid.set("note", std::string("it's a: b, [c]"), "punctuation");
  valid.set("blank", std::string(""), "empty string");
  valid.set("lines", std::string("first\nsecond"), "multi-line string");
  valid.set("whole", 2.0, "an integral double");
  valid.set("tiny", 0.1, "not exact in binary");
  ParameterList deck =
      parse("repetitions: 3\nmesh:\n  rows: 8\nverbose: true\nratios: [0.25, 3]\n");
  validate_and_fill(deck, valid);

  ScratchDir dir;
  const std::string path = (dir.path() / "deck.yaml").string();
  write_deck_yaml(path, deck, "meshslice-test, deck x.yaml\n--set a=b");
  ParameterList reloaded = load_deck(path);
  validate_and_fill(reloaded, valid);  // strict: every type must come back as written

  EXPECT_TRUE(Teuchos::haveSameValues(deck, reloaded));
  EXPECT_EQ(get_param<std::string>(reloaded, "switch"), "on");
  EXPECT_EQ(get_param<std::string>(reloaded, "code"), "2");
  EXPECT_EQ(get_param<std::string>(reloaded, "note"), "it's a: b, [c]");
  EXPECT_EQ(get_param<std::string>(reloaded, "blank"), "");
  EXPECT_EQ(get_param<std::string>(reloaded, "lines"), "first\nsecond");
  EXPECT_EQ(get_param<double>(reloaded, "tiny"), 0.1);  // exact, not approximately
  EXPECT_EQ(get_param<double>(reloaded, "whole"), 2.0);
  EXPECT_EQ(get_doubles(reloaded, "ratios"), (std::vector<double>{0.25, 3.0}));
  EXPECT_EQ(get_param<int>(reloaded, "mesh.rows"), 8);
  EXPECT_TRUE(get_param<bool>(reloaded, "verbose"));

  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  expect_contains(text, {"# meshslice-test, deck x.yaml\n# --set a=b\n", "tiny: 0.1\n",
                         "whole: 2.0\n", "switch: 'on'\n"});
}

TEST(DeckWrite, EmptyArrayIsRecordedAsAComment) {
  ParameterList deck = resolved("");
  apply_override(deck, valid_parameters(), "sizes=[]");
  ScratchDir dir;
  const std::string path = (dir.path() / "deck.yaml").string();
  write_deck_yaml(path, deck);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  expect_contains(text, {"# sizes: []  (empty int array)"});
  EXPECT_NO_THROW(load_deck(path));
}

// Only the writing rank sees it: a RankLocalError (the apps abort the job on it).
TEST(DeckWrite, UnwritablePathIsARankLocalError) {
  try {
    write_deck_yaml("/nonexistent/dir/deck.yaml", ParameterList());
    ADD_FAILURE() << "no error";
  } catch (const RankLocalError& e) {
    expect_contains(e.what(), {"cannot open output file '/nonexistent/dir/deck.yaml.partial'"});
  }
}

TEST(DeckWrite, IsAtomic) {
  const ScratchDir scratch;
  const std::string dir = scratch.path().string();
  const std::string path = dir + "/deck.yaml";
  ParameterList deck;
  deck.set("a", 1);
  write_deck_yaml(path, deck);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  {
    OutputFile unfinished(path);  // a run that fails before committing
    unfinished.stream() << "half";
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  EXPECT_EQ(load_deck(path).get<int>("a"), 1);  // the complete file is untouched
  std::filesystem::create_directories(dir + "/in-the-way.csv");
  try {
    OutputFile blocked(dir + "/in-the-way.csv");
    ADD_FAILURE() << "a directory under the output's name was not noticed";
  } catch (const RankLocalError& e) {
    expect_contains(e.what(), {"a directory of that name is in the way"});
  }
}

}  // namespace
}  // namespace meshslice
