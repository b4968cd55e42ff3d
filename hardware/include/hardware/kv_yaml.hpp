#pragma once
// A reader for the small YAML subset the machine descriptions use: nested maps by indentation,
// scalar values, flow lists `[a, b]`, and `#` comments. It flattens the document into dotted
// keys ("ici.all_gather.launch_us") so that a consumer can check each key against the list it
// knows, and name unknown or missing keys with their line.
//
// Why not a YAML library: hardware/ is plain C++17 with no dependencies (no Teuchos, no MPI, no
// Kokkos), so the timing model can be reused and tested anywhere; the subset is all a machine
// description needs.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshslice::hw {

// Any problem with a machine description: malformed text, unknown or missing keys, bad values.
class MachineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KvEntry {
  std::string value;  // scalar text, or "[a, b]" for a flow list, trimmed
  int line = 0;       // 1-based line in the source
  bool used = false;  // set by the consumer, so leftovers can be reported as unknown keys
};

// Dotted key -> entry. Sections (keys without a value) are not entries themselves.
using KvMap = std::map<std::string, KvEntry>;

// Parses `text`; `source` names it in error messages ("tpuv4-sim.yaml:12: ...").
KvMap parse_kv_yaml(const std::string& text, const std::string& source);

// The items of a flow list "[a, b, c]" (trimmed); a scalar is a one-item list.
std::vector<std::string> split_flow_list(const std::string& value);

}  // namespace meshslice::hw
