// Machine descriptions: the shipped TPUv4 file, and the errors a user gets for a bad one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hardware/machine.hpp"

namespace meshslice::hw {
namespace {

std::string tpuv4_text() {
  std::ifstream in(machine_path("tpuv4-cloud"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the MachineError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    parse_machine(text, "test.yaml");
  } catch (const MachineError& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Machine, ShippedCloudTpuv4HasTheMeasuredParameters) {
  const Machine m = load_machine(machine_path("tpuv4-cloud"));
  EXPECT_EQ(m.name, "TPUv4-cloud");
  EXPECT_EQ(m.chip.tensor_cores, 2);
  EXPECT_EQ(m.chip.mxus_per_core, 4);
  EXPECT_DOUBLE_EQ(m.chip.utilization_peak_flops, 272e12);
  EXPECT_DOUBLE_EQ(m.chip.hbm_bandwidth, 1200e9);
  EXPECT_DOUBLE_EQ(m.chip.scratchpad_bytes, 64.0 * 1024 * 1024);
  const LinkParams& ag1 = m.ici.link(CommKind::all_gather, Ring::dim1);
  EXPECT_DOUBLE_EQ(ag1.launch_s, 13e-6);
  EXPECT_DOUBLE_EQ(ag1.sync_s, 5e-6);
  EXPECT_DOUBLE_EQ(ag1.bandwidth, 79.8e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::reduce_scatter, Ring::dim0).bandwidth, 37.5e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::reduce_scatter, Ring::dim0).launch_s, 26e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dim0).sync_s, 50e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dim1).bandwidth, 35.2e9);
  EXPECT_EQ(m.ici.ring_directions, 1);  // Cloud slices use one direction of each link
  EXPECT_TRUE(m.ici.nic_hbm_contention);
}

TEST(Machine, ShippedSimulatedTorusHasTheAuthorsSimulationConstants) {
  const Machine m = load_machine(machine_path("tpuv4-sim"));
  EXPECT_EQ(m.name, "TPUv4-sim");
  for (CommKind kind : {CommKind::all_gather, CommKind::reduce_scatter, CommKind::send_recv})
    for (Ring ring : {Ring::dim0, Ring::dim1, Ring::dp, Ring::pp}) {
      EXPECT_DOUBLE_EQ(m.ici.link(kind, ring).launch_s, 100e-6);
      EXPECT_DOUBLE_EQ(m.ici.link(kind, ring).sync_s, 6e-6);
    }
  for (Ring ring : {Ring::dim0, Ring::dim1, Ring::dp, Ring::pp}) {  // a symmetric torus
    EXPECT_DOUBLE_EQ(m.ici.link(CommKind::all_gather, ring).bandwidth, 60e9);
    EXPECT_DOUBLE_EQ(m.ici.link(CommKind::reduce_scatter, ring).bandwidth, 50e9);
  }
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dim0).bandwidth, 38.801e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dim1).bandwidth, 35.224e9);
  EXPECT_EQ(m.ici.ring_directions, 2);
  // The same chip as the Cloud description.
  const Machine cloud = load_machine(machine_path("tpuv4-cloud"));
  EXPECT_EQ(machine_yaml(Machine{"", "", m.chip, {}}, ""),
            machine_yaml(Machine{"", "", cloud.chip, {}}, ""));
}

// `text` with the first `from` after the first `anchor` replaced by `to`.
std::string replaced_after(std::string text, const std::string& anchor, const std::string& from,
                           const std::string& to) {
  const auto start = text.find(anchor);
  EXPECT_NE(start, std::string::npos) << anchor;
  const auto at = text.find(from, start);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Machine, ShippedTpuv4DpAndPpLinksTakeDimensionOnesCalibration) {
  const Machine m = load_machine(machine_path("tpuv4-cloud"));
  for (Ring ring : {Ring::dp, Ring::pp}) {
    const LinkParams& ag = m.ici.link(CommKind::all_gather, ring);
    EXPECT_DOUBLE_EQ(ag.launch_s, 13e-6);
    EXPECT_DOUBLE_EQ(ag.sync_s, 5e-6);
    EXPECT_DOUBLE_EQ(ag.bandwidth, 79.8e9);
    const LinkParams& rds = m.ici.link(CommKind::reduce_scatter, ring);
    EXPECT_DOUBLE_EQ(rds.launch_s, 26e-6);
    EXPECT_DOUBLE_EQ(rds.sync_s, 5e-6);
    EXPECT_DOUBLE_EQ(rds.bandwidth, 63.2e9);
    const LinkParams& sr = m.ici.link(CommKind::send_recv, ring);
    EXPECT_DOUBLE_EQ(sr.launch_s, 13e-6);
    EXPECT_DOUBLE_EQ(sr.sync_s, 50e-6);
    EXPECT_DOUBLE_EQ(sr.bandwidth, 35.2e9);
  }
}

TEST(Machine, DpAndPpLinksParseIntoTheirOwnSets) {
  std::string text = tpuv4_text();
  text = replaced_after(text, "dp_links:", "gb_per_s: 79.8", "gb_per_s: 11");
  text = replaced_after(text, "dp_links:", "launch_us: 26", "launch_us: 12");
  text = replaced_after(text, "pp_links:", "sync_us: 50", "sync_us: 3");
  text = replaced_after(text, "pp_links:", "gb_per_s: 35.2", "gb_per_s: 0.5");
  const Machine m = parse_machine(text, "test.yaml");
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::all_gather, Ring::dp).bandwidth, 11e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::reduce_scatter, Ring::dp).launch_s, 12e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::pp).sync_s, 3e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::pp).bandwidth, 0.5e9);
  // Nothing else moved: the other ring's, and the mesh dimensions', links are as shipped.
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::all_gather, Ring::pp).bandwidth, 79.8e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dp).sync_s, 50e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::all_gather, Ring::dim1).bandwidth, 79.8e9);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::reduce_scatter, Ring::dim1).launch_s, 26e-6);
  EXPECT_DOUBLE_EQ(m.ici.link(CommKind::send_recv, Ring::dim1).sync_s, 50e-6);
}

TEST(Machine, MissingDpOrPpKeyIsNamed) {
  std::string err = error_of(replaced_after(tpuv4_text(), "pp_links:", "      gb_per_s: 35.2", ""));
  EXPECT_NE(err.find("missing key 'ici.pp_links.send_recv.gb_per_s'"), std::string::npos) << err;
  err = error_of(replaced_after(tpuv4_text(), "dp_links:", "      sync_us: 5", ""));
  EXPECT_NE(err.find("missing key 'ici.dp_links.all_gather.sync_us'"), std::string::npos) << err;
  // A description written before the dp/pp links existed.
  const std::string text = tpuv4_text();
  const auto from = text.find("  dp_links:"), to = text.find("  # Cloud slices use one direction");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  err = error_of(text.substr(0, from) + text.substr(to));
  EXPECT_NE(err.find("missing key 'ici.dp_links.all_gather.launch_us'"), std::string::npos) << err;
}

TEST(Machine, BadDpOrPpValuesAreNamed) {
  std::string err = error_of(
      replaced_after(tpuv4_text(), "dp_links:", "gb_per_s: 79.8", "gb_per_s: [79.8, 79.8]"));
  EXPECT_NE(err.find("'ici.dp_links.all_gather.gb_per_s' must be a number"), std::string::npos)
      << err;
  err = error_of(replaced_after(tpuv4_text(), "pp_links:", "gb_per_s: 63.2", "gb_per_s: 0"));
  EXPECT_NE(err.find("'ici.pp_links.reduce_scatter.gb_per_s' must be > 0"), std::string::npos)
      << err;
  err = error_of(replaced_after(tpuv4_text(), "pp_links:", "    send_recv:\n",
                                "    send_recv:\n      window_us: 4\n"));
  EXPECT_NE(err.find("'ici.pp_links.send_recv.window_us' unknown key"), std::string::npos) << err;
}

// What meshslice-tune's calibration writes, the loader reads back to the same machine.
TEST(Machine, WrittenDescriptionReadsBack) {
  Machine m = parse_machine(tpuv4_text(), "tpuv4.yaml");
  m.ici.kinds[static_cast<int>(CommKind::send_recv)][IciParams::dp_links].sync_s = 7.25e-6;
  m.ici.nic_hbm_contention = false;
  const std::string text = machine_yaml(m, "calibrated here\non 2 ranks");
  EXPECT_EQ(text.rfind("# calibrated here\n# on 2 ranks\n", 0), 0u) << text;
  const Machine back = parse_machine(text, "written.yaml");
  EXPECT_EQ(back.name, m.name);
  const ChipParams &a = m.chip, &b = back.chip;
  for (const auto& [x, y] : {std::pair{a.clock_hz, b.clock_hz},
                             {a.utilization_peak_flops, b.utilization_peak_flops},
                             {a.hbm_capacity_bytes, b.hbm_capacity_bytes},
                             {a.hbm_bandwidth, b.hbm_bandwidth},
                             {a.scratchpad_bytes, b.scratchpad_bytes}})
    EXPECT_NEAR(y, x, 1e-8 * x);
  EXPECT_EQ(b.tensor_cores, a.tensor_cores);
  EXPECT_EQ(b.mxu_rows, a.mxu_rows);
  EXPECT_EQ(b.sublane_rows, a.sublane_rows);
  for (int kind = 0; kind < 3; ++kind)
    for (int set = 0; set < IciParams::link_sets; ++set) {
      const LinkParams &x = m.ici.kinds[kind][set], &y = back.ici.kinds[kind][set];
      EXPECT_NEAR(y.launch_s, x.launch_s, 1e-14) << kind << " " << set;
      EXPECT_NEAR(y.sync_s, x.sync_s, 1e-14) << kind << " " << set;
      EXPECT_NEAR(y.bandwidth, x.bandwidth, 1e-8 * x.bandwidth) << kind << " " << set;
    }
  EXPECT_EQ(back.ici.ring_directions, m.ici.ring_directions);
  EXPECT_EQ(back.ici.ring1d_like_dim, m.ici.ring1d_like_dim);
  EXPECT_FALSE(back.ici.nic_hbm_contention);
}

TEST(Machine, UnknownKeyIsNamedWithItsLine) {
  const std::string err = error_of(tpuv4_text() + "extra_knob: 3\n");
  EXPECT_NE(err.find("'extra_knob' unknown key"), std::string::npos) << err;
  EXPECT_NE(err.find("test.yaml:"), std::string::npos) << err;
}

TEST(Machine, MissingKeyIsNamed) {
  const std::string err = error_of(replaced(tpuv4_text(), "  clock_ghz: 1.05", ""));
  EXPECT_NE(err.find("missing key 'chip.clock_ghz'"), std::string::npos) << err;
}

TEST(Machine, BadValuesAreNamed) {
  std::string err = error_of(replaced(tpuv4_text(), "clock_ghz: 1.05", "clock_ghz: fast"));
  EXPECT_NE(err.find("'chip.clock_ghz' must be a number"), std::string::npos) << err;
  err = error_of(replaced(tpuv4_text(), "mxu_rows: 128", "mxu_rows: 0"));
  EXPECT_NE(err.find("'chip.mxu_rows' must be a whole number >= 1"), std::string::npos) << err;
  err = error_of(replaced(tpuv4_text(), "gb_per_s: [27.5, 79.8]", "gb_per_s: [27.5]"));
  EXPECT_NE(err.find("'ici.all_gather.gb_per_s' must list 2 values"), std::string::npos) << err;
  err = error_of(replaced(tpuv4_text(), "nic_hbm_contention: true", "nic_hbm_contention: maybe"));
  EXPECT_NE(err.find("must be true or false"), std::string::npos) << err;
}

TEST(Machine, MalformedTextIsRejectedWithItsLine) {
  EXPECT_NE(error_of("name: x\nname: y\n").find("test.yaml:2: duplicate key 'name'"),
            std::string::npos);
  EXPECT_NE(error_of("chip:\n\ttensor_cores: 2\n").find("tab"), std::string::npos);
  EXPECT_NE(error_of("just words\n").find("expected 'key: value'"), std::string::npos);
  EXPECT_NE(error_of("chip:\nname: x\n").find("section 'chip' is empty"), std::string::npos);
}

TEST(Machine, UnknownNameListsWhereItLookedAndTheShippedNames) {
  // "tpuv4" was the shipped name before tpuv4-sim and tpuv4-cloud.
  for (const char* name : {"tpu99", "tpuv4"}) {
    try {
      machine_path(name);
      FAIL() << "no error for " << name;
    } catch (const MachineError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("'") + name + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("laptop, tpuv4-cloud, tpuv4-sim"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(machine_path("some/dir/x.yaml"), "some/dir/x.yaml");
}

TEST(KvYaml, FlattensSectionsIntoDottedKeys) {
  const KvMap map = parse_kv_yaml("a: 1\nb:\n  c: [1, 2]  # comment\n  d:\n    e: x\n", "t");
  ASSERT_EQ(map.size(), 3u);
  EXPECT_EQ(map.at("a").value, "1");
  EXPECT_EQ(map.at("b.c").value, "[1, 2]");
  EXPECT_EQ(map.at("b.d.e").value, "x");
  EXPECT_EQ(map.at("b.d.e").line, 5);
  EXPECT_EQ(split_flow_list("[1, 2]"), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(split_flow_list("[]").empty());
}

}  // namespace
}  // namespace meshslice::hw
