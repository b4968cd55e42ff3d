#pragma once
// Results as CSV files a person can plot: a header, then one row per measurement. Only the
// process that opens the file writes (rank 0 in the apps); numbers keep full precision.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace meshslice {

class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& columns);
  const std::string& path() const { return path_; }

  // row(a, b, c): one value per column, in the header's order.
  template <class... Values>
  void row(const Values&... values) {
    static_assert(sizeof...(Values) > 0);
    require(sizeof...(Values) == columns_, "CSV row of ", sizeof...(Values), " values for ",
            columns_, " columns in ", path_);
    std::ostringstream line;
    line.precision(9);
    const char* separator = "";
    ((line << separator << values, separator = ","), ...);
    out_ << line.str() << '\n';
    out_.flush();  // rows survive a job killed mid-run
  }

 private:
  std::string path_;
  std::size_t columns_;
  std::ofstream out_;
};

}  // namespace meshslice
