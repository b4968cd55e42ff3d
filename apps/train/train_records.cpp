#include "train_records.hpp"

#include <sstream>

#include "core/log.hpp"
#include "core/tensorboard_events.hpp"

namespace meshslice::train {
namespace {

// The cells of a train.csv row ("12,3.5,,0.9"); an empty cell is an empty string.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  if (!row.empty() && row.back() == ',') out.emplace_back();
  return out;
}

}  // namespace

const std::vector<std::string>& TrainRecords::columns() {
  static const std::vector<std::string> names{"step",
                                              "loss",
                                              "eval_loss",
                                              "grad_norm",
                                              "lr",
                                              "seconds",
                                              "data_seconds",
                                              "tokens_per_s",
                                              "gemm_gflops",
                                              "peak_fraction",
                                              "exposed_comm_fraction",
                                              "relayouts",
                                              "bubble_fraction",
                                              "emulated_seconds",
                                              "emulated_exposed_comm_fraction",
                                              "emulated_flop_utilization",
                                              "update_skipped"};
  return names;
}

TrainRecords::TrainRecords(const Settings& settings, const std::string& out_dir,
                           std::size_t resumed, const std::vector<std::string>& earlier_rows,
                           const std::string& deck_text)
    : out_dir_(out_dir), csv_(out_dir + "/train.csv", columns()) {
  for (const std::string& row : earlier_rows) csv_.line(row);
  if (settings.plot)
    plot_ = std::make_unique<LossPlot>(out_dir, concat("meshslice-train ", settings.mesh.str()));
  if (!settings.tensorboard) return;
  // A fresh run starts the file afresh (an old OUT's events are not this run's); a resumed one
  // keeps the events up to its checkpoint's step.
  const std::int64_t keep = resumed > 0 ? static_cast<std::int64_t>(resumed) : -1;
  tensorboard_ = std::make_unique<TensorBoardWriter>(out_dir + "/tensorboard", keep);
  // Rows of the checkpoint that the event file lacks (a resume into a new OUT): their scalars
  // again, stamped now.
  const double now = unix_seconds_now();
  for (const std::string& row : earlier_rows) {
    const std::vector<std::string> values = cells(row);
    if (values.empty() || std::stoll(values[0]) <= tensorboard_->last_step_kept()) continue;
    for (std::size_t c = 1; c < values.size() && c < columns().size(); ++c)
      if (!values[c].empty())
        tensorboard_->scalar(columns()[c], std::stoll(values[0]), std::stod(values[c]), now);
  }
  // Under the first step this run trains, so that resuming twice from one checkpoint cuts the
  // first resume's; fenced, because TensorBoard renders a text as Markdown.
  tensorboard_->text("deck", static_cast<std::int64_t>(resumed + 1),
                     concat("```\n", deck_text, "```\n"), now);
  tensorboard_->flush();
}

TrainRecords::~TrainRecords() = default;

void TrainRecords::row(std::size_t step, const RecordValues& values) {
  require(values.size() + 1 == columns().size(), "train.csv row of ", values.size() + 1,
          " values for ", columns().size(), " columns");
  std::ostringstream line;
  line.precision(9);
  line << step;
  for (const std::optional<double>& value : values) {
    line << ',';
    if (value) line << *value;
  }
  csv_.line(line.str());
  if (!tensorboard_) return;
  const double now = unix_seconds_now();
  for (std::size_t c = 0; c < values.size(); ++c)
    if (values[c])
      tensorboard_->scalar(columns()[c + 1], static_cast<std::int64_t>(step), *values[c], now);
  tensorboard_->flush();  // a killed run's events hold every step, as train.csv.partial does
}

void TrainRecords::scalar(const std::string& tag, std::size_t step, double value) {
  if (tensorboard_)
    tensorboard_->scalar(tag, static_cast<std::int64_t>(step), value, unix_seconds_now());
}

void TrainRecords::text(const std::string& tag, std::size_t step, const std::string& text) {
  if (!tensorboard_) return;
  tensorboard_->text(tag, static_cast<std::int64_t>(step), text, unix_seconds_now());
  tensorboard_->flush();
}

void TrainRecords::evaluated() {
  if (plot_) plot_->draw("train.csv.partial");
}

void TrainRecords::finish() {
  csv_.finish();
  if (tensorboard_) tensorboard_->flush();
  if (plot_) plot_->draw("train.csv");
}

std::string TrainRecords::where() const {
  std::string text;
  if (plot_ && !plot_->png().empty()) text = concat("loss plot ", plot_->png());
  if (tensorboard_)
    text += concat(text.empty() ? "" : "; ", "TensorBoard: tensorboard --logdir ", out_dir_,
                   "/tensorboard");
  return text;
}

}  // namespace meshslice::train
