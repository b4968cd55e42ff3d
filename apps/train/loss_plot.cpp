#include "loss_plot.hpp"

#include <cstdio>
#include <utility>

#include "core/gnuplot.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"

namespace meshslice::train {

LossPlot::LossPlot(std::string out_dir, std::string title)
    : out_dir_(std::move(out_dir)), title_(std::move(title)) {
  // A quote inside gnuplot's single-quoted string is written twice.
  for (auto at = title_.find('\''); at != std::string::npos; at = title_.find('\'', at + 2))
    title_.insert(at, 1, '\'');
  if (!gnuplot_installed())
    log_info("gnuplot not found: no loss plot (OUT/train.png); install gnuplot (Debian: "
             "gnuplot-nox) for one, or plot OUT/train.csv");
}

void LossPlot::draw(const std::string& csv) {
  if (!gnuplot_installed()) return;
  // Drawn beside the final name and renamed, so a viewer never opens half a picture. The
  // held-out loss is empty between evaluations: gnuplot skips empty cells of a CSV file.
  const std::string script =
      "set terminal pngcairo noenhanced size 900,540 font ',10'\n"
      "set output 'train.png.partial'\n"
      "set datafile separator ','\n"
      "set title '" +
      title_ +
      "'\n"
      "set xlabel 'step'\n"
      "set ylabel 'loss'\n"
      "set y2label 'learning rate'\n"
      "set ytics nomirror\n"
      "set y2tics\n"
      "set grid ytics\n"
      "set key top right\n"
      "plot '" +
      csv +
      "' using 'step':'loss' with lines lw 1 lc rgb '#88aadd' title 'train loss', \\\n"
      "     '' using 'step':'eval_loss' with linespoints lw 2 pt 7 ps 0.8 lc rgb '#d95f02' "
      "title 'held-out loss', \\\n"
      "     '' using 'step':'lr' axes x1y2 with lines dt 2 lc rgb 'gray40' title 'learning rate'\n";
  write_output_file(out_dir_ + "/train.gp", script);
  if (!run_gnuplot(out_dir_, "train.gp")) return;
  const std::string png = out_dir_ + "/train.png";
  if (std::rename((png + ".partial").c_str(), png.c_str()) == 0) png_ = png;
}

}  // namespace meshslice::train
