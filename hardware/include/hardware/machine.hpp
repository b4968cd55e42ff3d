#pragma once
// A machine description: the parameters of one accelerator chip and of the inter-chip
// interconnect (ICI) of a 2D torus of such chips, in SI units. Loaded from a file such as
// hardware/machines/tpuv4-sim.yaml, where every value is documented with its source.
#include <algorithm>
#include <array>
#include <string>

#include "hardware/kv_yaml.hpp"

namespace meshslice::hw {

struct ChipParams {
  int tensor_cores = 0;   // independent cores sharing the HBM
  int mxus_per_core = 0;  // systolic matrix units per core
  int mxu_rows = 0;       // systolic array height (the K extent of one weight block)
  int mxu_cols = 0;       // systolic array width (the N extent of one weight block)
  double clock_hz = 0;
  double utilization_peak_flops = 0;  // the FLOP/s that FLOP utilization is measured against
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth = 0;     // bytes/s, shared by the cores and the NIC
  double scratchpad_bytes = 0;  // on-chip memory per core
  int element_bytes = 0;        // operand/result element size (bf16: 2)
  int accumulator_bytes = 0;    // MXU accumulator element size (fp32: 4)
  int sublane_rows = 0;         // rows of a memory tile: streamed rows are padded to it

  // 2 FLOP per multiply-accumulate, every MXU cell busy every cycle.
  double peak_flops() const {
    return 2.0 * tensor_cores * mxus_per_core * mxu_rows * mxu_cols * clock_hz;
  }
  // The denominator of FLOP utilization: utilization_peak_flops (the paper's 272 TFLOP/s for
  // TPUv4), or the chip's own peak where that is higher (TPUv4's arrays give 275), so that no
  // emulated run can exceed a utilization of 1.
  double utilization_flops() const { return std::max(utilization_peak_flops, peak_flops()); }
};

// The three calibrated communication kinds. Broadcast and reduce have no calibration of their
// own: they use the all-gather and reduce-scatter parameters respectively (the same pairing as
// the MeshSlice reference implementation's cost model).
enum class CommKind { all_gather = 0, reduce_scatter = 1, send_recv = 2 };
const char* comm_kind_name(CommKind kind);  // "all_gather", "reduce_scatter", "send_recv"

// One kind of operation on the rings of one link set (a mesh dimension, or the dp/pp links):
// cost = launch + steps * (sync + bytes / bandwidth) (hw::IciModel).
struct LinkParams {
  double launch_s = 0;  // per operation
  double sync_s = 0;    // per step (every step synchronizes neighbouring chips)
  // bytes/s: for all-gather and reduce-scatter the collective's rate on the whole ring (a shard
  // per step, over every direction the ring uses); for send_recv one link direction's rate.
  double bandwidth = 0;
};

// Which ring an operation runs on: the rings along mesh dimension 0 (a mesh column; the
// executors' Axis::row), along dimension 1 (a mesh row; Axis::col), a 1D ring through every
// chip (the 1D tensor-parallel and FSDP baselines), or the data-parallel (Axis::dp) and
// pipeline-parallel (Axis::pp) rings, which run over links of their own.
enum class Ring { dim0 = 0, dim1 = 1, ring1d = 2, dp = 3, pp = 4 };

struct IciParams {
  // The sets of links a ring can run over, each with its own calibration: the two mesh
  // dimensions of the tensor-parallel mesh, and the data- and pipeline-parallel links.
  enum LinkSet { mesh_dim0 = 0, mesh_dim1 = 1, dp_links = 2, pp_links = 3, link_sets = 4 };

  std::array<std::array<LinkParams, link_sets>, 3> kinds{};  // [CommKind][LinkSet]
  // Link directions a ring uses at once: 2 on full-duplex torus links, 1 on a ring used one
  // way. A broadcast or reduce splits its buffer over them (each at its share of the ring's
  // rate, over half the hops); the all-gather and reduce-scatter rates already include them.
  // With 1, shifts going opposite ways (Wang's and Cannon's half-blocks) share the one
  // direction (sim::SimExecutor).
  int ring_directions = 2;
  int ring1d_like_dim = 1;          // the 1D ring's links behave like this mesh dimension's
  bool nic_hbm_contention = false;  // the NIC's HBM traffic slows HBM-bound GEMM phases

  // The link set `ring` runs over.
  LinkSet link_set(Ring ring) const {
    switch (ring) {
      case Ring::dim0: return mesh_dim0;
      case Ring::dim1: return mesh_dim1;
      case Ring::ring1d: return ring1d_like_dim == 0 ? mesh_dim0 : mesh_dim1;
      case Ring::dp: return dp_links;
      case Ring::pp: return pp_links;
    }
    throw MachineError("invalid hw::Ring value " + std::to_string(static_cast<int>(ring)));
  }

  const LinkParams& link(CommKind kind, Ring ring) const {
    return kinds[static_cast<int>(kind)][link_set(ring)];
  }
};

struct Machine {
  std::string name;
  std::string source;  // file the description came from
  ChipParams chip;
  IciParams ici;
};

// Parses a machine description; every key is required, unknown keys and bad values are errors
// that name the key, its line and the fix. `source` names the text in messages.
Machine parse_machine(const std::string& text, const std::string& source);
// Reads and parses a machine description file.
Machine load_machine(const std::string& path);
// The description's text, which parse_machine reads back to the same values (up to 9
// significant digits); `comment` heads it as # lines (where the values came from).
std::string machine_yaml(const Machine& machine, const std::string& comment);
// A shipped machine by name ("tpuv4-sim" -> hardware/machines/tpuv4-sim.yaml of the source tree
// this library was built from), or any path (contains '/' or ends in .yaml) as given.
std::string machine_path(const std::string& name_or_path);

}  // namespace meshslice::hw
