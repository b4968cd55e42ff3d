#include "core/csv.hpp"

namespace meshslice {

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns)
    : path_(path), columns_(columns.size()), out_(path) {
  require(out_.good(), "cannot write results file ", path,
          "; check that --out names a writable directory");
  const char* separator = "";
  for (const auto& column : columns) {
    out_ << separator << column;
    separator = ",";
  }
  out_ << '\n';
}

}  // namespace meshslice
