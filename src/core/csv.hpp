#pragma once
// Results as CSV files a person can plot: a header, then one row per measurement. Only the
// process that opens the file writes (rank 0 in the apps); numbers keep full precision. Written
// atomically (core/output_file.hpp): rows go to PATH.partial as they come, and finish() puts the
// complete file under its name.
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/output_file.hpp"

namespace meshslice {

class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& columns);
  const std::string& path() const { return out_.path(); }

  // row(a, b, c): one value per column, in the header's order.
  template <class... Values>
  void row(const Values&... values) {
    static_assert(sizeof...(Values) > 0);
    require(sizeof...(Values) == columns_, "CSV row of ", sizeof...(Values), " values for ",
            columns_, " columns in ", path());
    std::ostringstream line;
    line.precision(9);
    const char* separator = "";
    ((line << separator << values, separator = ","), ...);
    out_.stream() << line.str() << '\n';
    out_.flush();  // rows survive a job killed mid-run, in PATH.partial
  }
  // A row already formatted (an earlier run's, carried over by a resumed one).
  void line(const std::string& text) {
    out_.stream() << text << '\n';
    out_.flush();
  }
  // The run is complete: the file goes under its name.
  void finish() { out_.commit(); }

 private:
  std::size_t columns_;
  OutputFile out_;
};

}  // namespace meshslice
