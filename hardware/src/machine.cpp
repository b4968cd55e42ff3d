#include "hardware/machine.hpp"

#include "hardware/install_layout.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace meshslice::hw {

const char* comm_kind_name(CommKind kind) {
  switch (kind) {
    case CommKind::all_gather: return "all_gather";
    case CommKind::reduce_scatter: return "reduce_scatter";
    case CommKind::send_recv: return "send_recv";
  }
  return "?";
}

namespace {

// Reads typed values out of a KvMap, marking what it reads, with errors naming key and line.
class Reader {
 public:
  Reader(KvMap& map, std::string source) : map_(map), source_(std::move(source)) {}

  std::string text(const std::string& key) { return entry(key).value; }

  // A number > 0, or >= 0 with `allow_zero` (latencies may be zero, sizes and rates not).
  double number(const std::string& key, bool allow_zero = false) {
    KvEntry& e = entry(key);
    return parse_number(key, e.value, e.line, allow_zero);
  }

  // A whole number >= `min` that fits an int (checked before the cast: converting a larger
  // double to int is undefined behaviour).
  int integer(const std::string& key, int min) {
    KvEntry& e = entry(key);
    const double v = parse_number(key, e.value, e.line, true);
    const int max = std::numeric_limits<int>::max();
    if (v != std::floor(v) || v < min || v > max) {
      std::ostringstream os;
      os << "must be a whole number >= " << min << " (and <= " << max << "), got '" << e.value
         << "'";
      fail(key, e.line, os.str());
    }
    return static_cast<int>(v);
  }

  bool boolean(const std::string& key) {
    KvEntry& e = entry(key);
    if (e.value == "true") return true;
    if (e.value == "false") return false;
    fail(key, e.line, "must be true or false, got '" + e.value + "'");
  }

  // A flow list of exactly `count` positive numbers, e.g. "[27.5, 79.8]".
  std::vector<double> numbers(const std::string& key, std::size_t count) {
    KvEntry& e = entry(key);
    const auto items = split_flow_list(e.value);
    if (items.size() != count) {
      std::ostringstream os;
      os << "must list " << count << " values (one per mesh dimension), got '" << e.value << "'";
      fail(key, e.line, os.str());
    }
    std::vector<double> out;
    for (const auto& item : items) out.push_back(parse_number(key, item, e.line, false));
    return out;
  }

  // Every key must have been read: anything left is unknown to this program.
  void reject_unknown() const {
    for (const auto& [key, e] : map_)
      if (!e.used)
        fail(key, e.line, "unknown key; valid keys are those of hardware/machines/tpuv4-sim.yaml");
  }

 private:
  KvEntry& entry(const std::string& key) {
    auto it = map_.find(key);
    if (it == map_.end())
      throw MachineError(source_ + ": missing key '" + key +
                         "'; every parameter of hardware/machines/tpuv4-sim.yaml is required");
    it->second.used = true;
    return it->second;
  }

  double parse_number(const std::string& key, const std::string& text, int line,
                      bool allow_zero) const {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v))
      fail(key, line, "must be a number, got '" + text + "'");
    if (v < 0 || (v == 0 && !allow_zero))
      fail(key, line, std::string("must be ") + (allow_zero ? ">= 0" : "> 0") + ", got " + text);
    return v;
  }

  [[noreturn]] void fail(const std::string& key, int line, const std::string& what) const {
    std::ostringstream os;
    os << source_ << ":" << line << ": '" << key << "' " << what;
    throw MachineError(os.str());
  }

  KvMap& map_;
  std::string source_;
};

}  // namespace

Machine parse_machine(const std::string& text, const std::string& source) {
  KvMap map = parse_kv_yaml(text, source);
  Reader r(map, source);
  Machine m;
  m.source = source;
  m.name = r.text("name");

  ChipParams& c = m.chip;
  c.tensor_cores = r.integer("chip.tensor_cores", 1);
  c.mxus_per_core = r.integer("chip.mxus_per_core", 1);
  c.mxu_rows = r.integer("chip.mxu_rows", 1);
  c.mxu_cols = r.integer("chip.mxu_cols", 1);
  c.clock_hz = r.number("chip.clock_ghz") * 1e9;
  c.utilization_peak_flops = r.number("chip.utilization_peak_tflops") * 1e12;
  c.hbm_capacity_bytes = r.number("chip.hbm_gib") * 1024.0 * 1024.0 * 1024.0;
  c.hbm_bandwidth = r.number("chip.hbm_gb_per_s") * 1e9;
  c.scratchpad_bytes = r.number("chip.scratchpad_mib_per_core") * 1024.0 * 1024.0;
  c.element_bytes = r.integer("chip.element_bytes", 1);
  c.accumulator_bytes = r.integer("chip.accumulator_bytes", 1);
  c.sublane_rows = r.integer("chip.sublane_rows", 1);

  IciParams& ici = m.ici;
  for (CommKind kind : {CommKind::all_gather, CommKind::reduce_scatter, CommKind::send_recv}) {
    const std::string prefix = std::string("ici.") + comm_kind_name(kind) + ".";
    const double launch = r.number(prefix + "launch_us", true) * 1e-6;
    const double sync = r.number(prefix + "sync_us", true) * 1e-6;
    const auto gbps = r.numbers(prefix + "gb_per_s", 2);
    for (int dim = 0; dim < 2; ++dim)
      ici.kinds[static_cast<int>(kind)][dim] = LinkParams{launch, sync, gbps[dim] * 1e9};
  }
  // The data- and pipeline-parallel links: a full calibration of their own per kind.
  for (const auto& [section, set] :
       {std::pair{"dp_links", IciParams::dp_links}, std::pair{"pp_links", IciParams::pp_links}}) {
    for (CommKind kind : {CommKind::all_gather, CommKind::reduce_scatter, CommKind::send_recv}) {
      const std::string prefix = std::string("ici.") + section + "." + comm_kind_name(kind) + ".";
      LinkParams& link = ici.kinds[static_cast<int>(kind)][set];
      link.launch_s = r.number(prefix + "launch_us", true) * 1e-6;
      link.sync_s = r.number(prefix + "sync_us", true) * 1e-6;
      link.bandwidth = r.number(prefix + "gb_per_s") * 1e9;
    }
  }
  ici.ring_directions = r.integer("ici.ring_directions", 1);
  if (ici.ring_directions > 2)
    throw MachineError(source +
                       ": 'ici.ring_directions' must be 1 or 2 (a ring has two directions)");
  ici.ring1d_like_dim = r.integer("ici.ring1d_like_dim", 0);
  if (ici.ring1d_like_dim > 1)
    throw MachineError(source + ": 'ici.ring1d_like_dim' must be 0 or 1 (a mesh dimension)");
  ici.nic_hbm_contention = r.boolean("ici.nic_hbm_contention");
  r.reject_unknown();
  return m;
}

std::string machine_yaml(const Machine& m, const std::string& comment) {
  std::ostringstream out;
  out.precision(9);
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  const ChipParams& c = m.chip;
  const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
  out << "name: " << m.name << "\n\nchip:\n"
      << "  tensor_cores: " << c.tensor_cores << "\n"
      << "  mxus_per_core: " << c.mxus_per_core << "\n"
      << "  mxu_rows: " << c.mxu_rows << "\n"
      << "  mxu_cols: " << c.mxu_cols << "\n"
      << "  clock_ghz: " << c.clock_hz / 1e9 << "\n"
      << "  utilization_peak_tflops: " << c.utilization_peak_flops / 1e12 << "\n"
      << "  hbm_gib: " << c.hbm_capacity_bytes / gib << "\n"
      << "  hbm_gb_per_s: " << c.hbm_bandwidth / 1e9 << "\n"
      << "  scratchpad_mib_per_core: " << c.scratchpad_bytes / mib << "\n"
      << "  element_bytes: " << c.element_bytes << "\n"
      << "  accumulator_bytes: " << c.accumulator_bytes << "\n"
      << "  sublane_rows: " << c.sublane_rows << "\n\nici:\n";
  const auto link = [&](const std::string& indent, CommKind kind, int set) {
    const LinkParams& l = m.ici.kinds[static_cast<int>(kind)][set];
    out << indent << comm_kind_name(kind) << ":\n"
        << indent << "  launch_us: " << l.launch_s * 1e6 << "\n"
        << indent << "  sync_us: " << l.sync_s * 1e6 << "\n";
  };
  for (CommKind kind : {CommKind::all_gather, CommKind::reduce_scatter, CommKind::send_recv}) {
    link("  ", kind, IciParams::mesh_dim0);  // the two mesh dimensions share launch and sync
    const auto& dims = m.ici.kinds[static_cast<int>(kind)];
    out << "    gb_per_s: [" << dims[IciParams::mesh_dim0].bandwidth / 1e9 << ", "
        << dims[IciParams::mesh_dim1].bandwidth / 1e9 << "]\n";
  }
  for (const auto& [section, set] :
       {std::pair{"dp_links", IciParams::dp_links}, std::pair{"pp_links", IciParams::pp_links}}) {
    out << "  " << section << ":\n";
    for (CommKind kind : {CommKind::all_gather, CommKind::reduce_scatter, CommKind::send_recv}) {
      link("    ", kind, set);
      out << "      gb_per_s: " << m.ici.kinds[static_cast<int>(kind)][set].bandwidth / 1e9 << "\n";
    }
  }
  out << "  ring_directions: " << m.ici.ring_directions << "\n"
      << "  ring1d_like_dim: " << m.ici.ring1d_like_dim << "\n"
      << "  nic_hbm_contention: " << (m.ici.nic_hbm_contention ? "true" : "false") << "\n";
  return out.str();
}

Machine load_machine(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw MachineError("machine description '" + path +
                       "' is not a regular file (a directory?); give the path of a .yaml file");
  std::ifstream in(path);
  if (!in) throw MachineError("cannot read machine description '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_machine(text.str(), path);
}

}  // namespace meshslice::hw

namespace meshslice::hw {

std::string machine_path(const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".yaml") == 0);
  if (is_path) return name_or_path;
  // Installed, <prefix>/bin/app finds <prefix>/share/meshslice/machines (found from the
  // executable, so a moved prefix works); in a build tree, the source tree's hardware/machines.
  std::vector<std::filesystem::path> dirs;
  if (const auto installed = installed_data_dir(); !installed.empty())
    dirs.push_back(installed / "machines");
  dirs.push_back(MESHSLICE_MACHINES_DIR);
  std::string searched;
  for (const auto& dir : dirs) {
    const std::string path = (dir / (name_or_path + ".yaml")).lexically_normal().string();
    if (std::ifstream(path)) return path;
    searched += (searched.empty() ? "" : ", ") + path;
  }
  // Not found: list what is shipped.
  std::set<std::string> shipped;
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".yaml") shipped.insert(entry.path().stem().string());
  }
  std::string names;
  for (const std::string& name : shipped) names += (names.empty() ? "" : ", ") + name;
  throw MachineError("no machine description named '" + name_or_path + "' (looked for " + searched +
                     "); give a shipped name (" + names + ") or a path to a .yaml file");
}

}  // namespace meshslice::hw
