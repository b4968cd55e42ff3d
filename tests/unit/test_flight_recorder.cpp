// The flight recorder's ring, its timeout test, the faults it injects and its dump
// (core/flight_recorder.hpp). The watchdog and the MPI error handler are tested end to end by
// tests/scripts/check_flight_recorder.sh.
#include "core/flight_recorder.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "core/errors.hpp"
#include "core/json.hpp"

namespace meshslice {
namespace {

CommOpInfo op(CommKind kind, std::uint64_t group_op, std::size_t bytes) {
  CommOpInfo info;
  info.kind = kind;
  info.axis = "row";
  info.group_first = 2;
  info.group_op = group_op;
  info.bytes = bytes;
  info.element_bytes = 4;
  return info;
}

FlightSettings settings(std::size_t capacity, double timeout_seconds = 300) {
  FlightSettings s;
  s.capacity = capacity;
  s.timeout_seconds = timeout_seconds;
  s.watchdog = false;  // the tests call stuck_for themselves
  s.rank = 3;
  return s;
}

struct Restart {  // every test starts from a fresh recorder and leaves it off
  ~Restart() { FlightRecorder::instance().stop(); }
};

TEST(FlightRecorder, OffRecordsNothing) {
  Restart restart;
  FlightRecorder::instance().start(settings(0));
  EXPECT_EQ(FlightRecorder::instance().begin(op(CommKind::all_gather, 1, 64)).seq, 0u);
  EXPECT_TRUE(FlightRecorder::instance().history().empty());
}

TEST(FlightRecorder, KeepsTheLastOperationsInOrder) {
  Restart restart;
  FlightRecorder& recorder = FlightRecorder::instance();
  recorder.start(settings(4));
  for (std::uint64_t k = 1; k <= 6; ++k) {
    const auto ticket = recorder.begin(op(CommKind::reduce_scatter, k, 100 * k));
    EXPECT_EQ(ticket.seq, k);
    if (k != 5) recorder.end(ticket.seq);
  }
  const std::vector<FlightEntry> history = recorder.history();
  ASSERT_EQ(history.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(history[i].seq, i + 3);
    EXPECT_EQ(history[i].group_op, i + 3);
    EXPECT_EQ(history[i].bytes, 100 * (i + 3));
    EXPECT_STREQ(history[i].axis, "row");
    EXPECT_EQ(history[i].end < 0, history[i].seq == 5) << "only #5 is outstanding";
  }
}

TEST(FlightRecorder, AnOperationOutstandingPastTheTimeoutIsStuck) {
  Restart restart;
  FlightRecorder& recorder = FlightRecorder::instance();
  recorder.start(settings(8, 0.05));
  recorder.end(recorder.begin(op(CommKind::all_gather, 1, 8)).seq);
  const auto stuck = recorder.begin(op(CommKind::all_reduce, 2, 8));
  std::uint64_t which = 0;
  EXPECT_LT(recorder.stuck_for(&which), 0) << "not yet";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(recorder.stuck_for(&which), 0.05);
  EXPECT_EQ(which, stuck.seq);
  recorder.end(stuck.seq);
  EXPECT_LT(recorder.stuck_for(&which), 0) << "completed";
}

TEST(FlightRecorder, AnOperationPushedOutOfTheRingStillTimesOut) {
  Restart restart;
  FlightRecorder& recorder = FlightRecorder::instance();
  recorder.start(settings(2, 0.05));
  recorder.begin(op(CommKind::all_gather, 1, 8));  // never completes
  for (std::uint64_t k = 2; k <= 4; ++k)
    recorder.end(recorder.begin(op(CommKind::shift, k, 8)).seq);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(recorder.stuck_for(nullptr), 0.05);
}

TEST(FlightRecorder, InjectsOneFaultOnTheFirstInjectableOperationFromItsNumber) {
  Restart restart;
  FlightRecorder& recorder = FlightRecorder::instance();
  FlightSettings s = settings(8);
  s.inject = InjectedFault::wrong_size;
  s.inject_rank = 3;
  s.inject_at = 2;
  recorder.start(s);
  EXPECT_EQ(recorder.begin(op(CommKind::all_gather, 1, 64), true).fault, InjectedFault::none);
  EXPECT_EQ(recorder.begin(op(CommKind::all_reduce, 2, 64), false).fault, InjectedFault::none)
      << "a blocking operation cannot be shortened: the fault moves on";
  EXPECT_EQ(recorder.begin(op(CommKind::all_gather, 3, 64), true).fault, InjectedFault::wrong_size);
  EXPECT_EQ(recorder.begin(op(CommKind::all_gather, 4, 64), true).fault, InjectedFault::none)
      << "once";
  EXPECT_EQ(recorder.history()[2].bytes, 60u) << "the short message is what was posted";
  EXPECT_EQ(recorder.history()[2].fault, InjectedFault::wrong_size);

  s.inject_rank = 0;  // another rank: nothing happens here
  recorder.start(s);
  for (std::uint64_t k = 1; k <= 4; ++k)
    EXPECT_EQ(recorder.begin(op(CommKind::all_gather, k, 64), true).fault, InjectedFault::none);
}

TEST(FlightRecorder, DumpsGroupsOperationsAndTheWaitAsJson) {
  Restart restart;
  FlightRecorder& recorder = FlightRecorder::instance();
  recorder.start(settings(8));
  recorder.note_group("row", {2, 3});
  recorder.end(recorder.begin(op(CommKind::all_gather, 1, 64)).seq);
  const auto waited = recorder.begin(op(CommKind::reduce_scatter, 2, 128));
  recorder.wait_begin(waited.seq);
  const json::Value dump = json::parse(recorder.dump_json("a test"));
  EXPECT_EQ(dump.at("rank").as_uint(), 3u);
  EXPECT_EQ(dump.at("reason").as_string(), "a test");
  EXPECT_EQ(dump.at("waiting_on").as_uint(), waited.seq);
  bool found_group = false;
  for (const json::Value& g : dump.at("groups").items())
    found_group |= g.at("axis").as_string() == "row" && g.at("members").items().size() == 2;
  EXPECT_TRUE(found_group);
  const auto& ops = dump.at("operations").items();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].at("kind").as_string(), "all_gather");
  EXPECT_FALSE(ops[0].at("end").is_null());
  EXPECT_EQ(ops[1].at("kind").as_string(), "reduce_scatter");
  EXPECT_EQ(ops[1].at("bytes").as_uint(), 128u);
  EXPECT_TRUE(ops[1].at("end").is_null());
  recorder.wait_end();
  EXPECT_NE(recorder.state_line().find("busy outside communication"), std::string::npos);
}

TEST(FlightRecorder, NamesTheInjectableFaults) {
  EXPECT_EQ(parse_injected_fault("skip"), InjectedFault::skip);
  EXPECT_EQ(parse_injected_fault("sleep"), InjectedFault::sleep);
  EXPECT_THROW(parse_injected_fault("drop"), UserError);
}

}  // namespace
}  // namespace meshslice
