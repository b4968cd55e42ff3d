#pragma once
// What meshslice-train records per step on rank 0, each value once for every sink: OUT/train.csv
// (a row per step), TensorBoard event files in OUT/tensorboard/ (every column as a scalar under
// its column name, the samples and the resolved deck as text) and the loss plot OUT/train.png.
// A resumed run keeps the earlier rows and events up to its step and continues both.
//
//     TrainRecords records(settings, out_dir, resumed, checkpoints.earlier_rows(), deck_text);
//     records.row(step, {loss, eval_loss_or_nullopt, ...});   // one value per column after step
//     records.text("sample", step, text);
//     records.evaluated();                                      // redraws the plot
//     records.finish();                                         // train.csv under its name
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "loss_plot.hpp"
#include "train_settings.hpp"

namespace meshslice {
class TensorBoardWriter;
}

namespace meshslice::train {

// One value per column of train.csv after `step`, in order; nullopt leaves the cell empty.
using RecordValues = std::vector<std::optional<double>>;

class TrainRecords {
 public:
  // train.csv's header: step, then the columns of RecordValues.
  static const std::vector<std::string>& columns();

  TrainRecords(const Settings& settings, const std::string& out_dir, std::size_t resumed,
               const std::vector<std::string>& earlier_rows, const std::string& deck_text);
  ~TrainRecords();

  void row(std::size_t step, const RecordValues& values);
  // TensorBoard only: a scalar that is not a column (bits per byte, memory) or a text.
  void scalar(const std::string& tag, std::size_t step, double value);
  void text(const std::string& tag, std::size_t step, const std::string& text);
  // After an evaluation: the plot is redrawn with it.
  void evaluated();
  // The run is complete: train.csv goes under its name, the plot is drawn from it.
  void finish();
  // Where the run's pictures and event files are, for the closing log line ("" when none).
  std::string where() const;

 private:
  std::string out_dir_;
  CsvWriter csv_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::unique_ptr<LossPlot> plot_;
};

}  // namespace meshslice::train
