#pragma once
// OUT/train.png: the train and held-out loss against the step, the learning rate on a second
// axis, drawn by gnuplot (core/gnuplot.hpp) from the rows of train.csv written so far. Redrawn
// at each evaluation and at the end; the script stays as OUT/train.gp to restyle by hand.
// Without gnuplot there is no picture and one log line says so.
//
//     LossPlot plot(out_dir, "laptop-lm.yaml on 1x2");
//     plot.draw("train.csv.partial");   // a file in out_dir
#include <string>

namespace meshslice::train {

class LossPlot {
 public:
  LossPlot(std::string out_dir, std::string title);
  // Draws from `csv` (a file name in the output directory); a failed draw is logged, not fatal.
  void draw(const std::string& csv);
  // OUT/train.png once drawn, else empty.
  const std::string& png() const { return png_; }

 private:
  std::string out_dir_, title_, png_;
};

}  // namespace meshslice::train
