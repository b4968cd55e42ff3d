#pragma once
// meshslice-sim's figures, laid out like the MeshSlice paper's Figs. 9-14: for each figure a
// whitespace-separated data file per model and a gnuplot script in OUT/, rendered to PNG when
// gnuplot is installed (Debian: gnuplot-nox).
#include <string>
#include <vector>

#include "hardware/model.hpp"
#include "sim_settings.hpp"
#include "sim_sweep.hpp"

namespace meshslice::simapp {

// Writes the data files and scripts and runs gnuplot on them; returns the PNG files written
// (none when gnuplot is missing, which is logged, not an error: the CSV files hold the data).
std::vector<std::string> write_plots(const SimResults& results, const SimSettings& settings,
                                     const hw::Machine& machine, const std::string& out_dir);

}  // namespace meshslice::simapp
