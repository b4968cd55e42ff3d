#include "core/csv.hpp"

namespace meshslice {

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns)
    : columns_(columns.size()), out_(path) {
  const char* separator = "";
  for (const auto& column : columns) {
    out_.stream() << separator << column;
    separator = ",";
  }
  out_.stream() << '\n';
}

}  // namespace meshslice
