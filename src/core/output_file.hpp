#pragma once
// Result files written atomically: the text goes to PATH.partial beside the final name and is
// renamed to PATH by commit(), so a run that fails or is killed never leaves a half-written file
// under a final name (a killed run's PATH.partial shows how far it got). Destroyed without
// commit(), an OutputFile removes its partial file. Failing to open, write or rename is a
// RankLocalError (core/errors.hpp): only the writing rank sees it.
//
//     OutputFile out(dir + "/summary.json");
//     out.stream() << "{...}";
//     out.commit();
//
//     write_output_file(dir + "/version.json", text);   // the same in one call
#include <fstream>
#include <string>

namespace meshslice {

class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& path() const { return path_; }
  std::ostream& stream() { return out_; }
  // Pushes what was written so far to the partial file (a long run's rows survive a kill there).
  void flush();
  // Closes the partial file and renames it to the final name.
  void commit();

 private:
  void check(const char* what);
  std::string path_, partial_;
  std::ofstream out_;
  bool committed_ = false;
};

void write_output_file(const std::string& path, const std::string& text);

}  // namespace meshslice
