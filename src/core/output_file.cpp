#include "core/output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "core/errors.hpp"

namespace meshslice {

OutputFile::OutputFile(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {
  // Found now, not after a long run: the rename at the end could not replace a directory.
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    throw RankLocalError(concat("cannot write output file '", path_,
                                "': a directory of that "
                                "name is in the way; remove it or choose another --out"));
  out_.open(partial_);
  check("open");
}

OutputFile::~OutputFile() {
  if (committed_) return;
  out_.close();
  std::remove(partial_.c_str());
}

void OutputFile::check(const char* what) {
  if (out_.good()) return;
  throw RankLocalError(concat("cannot ", what, " output file '", partial_, "' (for '", path_,
                              "'); check that --out names a writable "
                              "directory with free space"));
}

void OutputFile::flush() {
  out_.flush();
  check("write");
}

void OutputFile::commit() {
  out_.close();
  check("write");
  if (std::rename(partial_.c_str(), path_.c_str()) != 0)
    throw RankLocalError(concat("cannot rename '", partial_, "' to '", path_,
                                "': is there a directory of that name?"));
  committed_ = true;
}

void write_output_file(const std::string& path, const std::string& text) {
  OutputFile out(path);
  out.stream() << text;
  out.commit();
}

}  // namespace meshslice
