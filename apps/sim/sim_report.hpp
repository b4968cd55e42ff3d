#pragma once
// meshslice-sim's outputs: the table on stdout, the CSV files, and Chrome traces.
#include <string>

#include "hardware/model.hpp"
#include "sim_settings.hpp"
#include "sim_sweep.hpp"

namespace meshslice::simapp {

// FLOP utilization per chip count and algorithm (best mesh shape), per model and scenario,
// and MeshSlice's speedup over every other algorithm at the largest chip count.
void print_tables(const SimResults& results, const SimSettings& settings,
                  const hw::Machine& machine);

// OUT/sim.csv (one row per algorithm and workload: its best mesh shape, or every mesh shape),
// OUT/sim_gemms.csv (the 12 GEMMs of every best configuration), OUT/sim_shapes.csv (Fig. 13)
// and OUT/sim_slices.csv (Fig. 14).
void write_csv_files(const SimResults& results, const SimSettings& settings,
                     const hw::Machine& machine, const std::string& out_dir);

// OUT/trace-<model>-<scaling>-<chips>-<algorithm>-<rows>x<cols>.json: the emulated chip's
// timeline of the block's 12 GEMMs, one after another, for every best configuration at
// settings.trace_chips chips.
void write_traces(const SimResults& results, const SimSettings& settings,
                  const hw::MachineModel& machine, const std::string& out_dir);

}  // namespace meshslice::simapp
