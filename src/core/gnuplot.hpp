#pragma once
// PNG figures through gnuplot where it is installed (Debian: gnuplot-nox), for meshslice-sim's
// figures and meshslice-train's loss plot. gnuplot is optional: without it the apps keep their
// data files and scripts and say once how to render them.
//
//     if (gnuplot_installed()) run_gnuplot(out_dir, "train.gp");   // writes what the script says
#include <string>

namespace meshslice {

// Whether `gnuplot` is on the PATH (looked up once).
bool gnuplot_installed();

// Runs gnuplot on `script` (a file name in `dir`) with `dir` as the working directory; true when
// it succeeded. On failure gnuplot's output stays in DIR/SCRIPT.log, which the logged line names.
bool run_gnuplot(const std::string& dir, const std::string& script);

}  // namespace meshslice
