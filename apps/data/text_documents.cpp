#include "text_documents.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/errors.hpp"

namespace meshslice::dataapp {

namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  require(in.good() || in.eof(), "cannot read ", path, ": ", std::strerror(errno));
  return text.str();
}

class Collector {
 public:
  explicit Collector(const std::function<void(const std::string&, const std::string&)>& document)
      : document_(document) {}

  void input(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);  // a link given by name is followed
    require(!ec && fs::exists(status), path, ": no such file or folder (", ec.message(), ")");
    if (fs::is_directory(status))
      folder(path);
    else if (fs::is_regular_file(status))
      file(path);
    else
      throw UserError(concat(path, " is neither a regular file nor a folder"));
  }

  const DocumentCounts& counts() const { return counts_; }

 private:
  void folder(const fs::path& path) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    require(!ec, "cannot list folder ", path.string(), ": ", ec.message());
    std::sort(entries.begin(), entries.end());
    for (const fs::path& entry : entries) {
      const fs::file_status own = fs::symlink_status(entry, ec);
      const fs::file_status target = fs::status(entry, ec);
      if (fs::is_directory(own))
        folder(entry);
      else if (fs::is_regular_file(target))  // a file, or a link to one
        file(entry.string());
      else
        ++counts_.not_followed;  // links to folders (cycles), dangling links, devices
    }
  }

  void file(const std::string& path) {
    ++counts_.files;
    struct stat facts {};
    require(::stat(path.c_str(), &facts) == 0, "cannot read ", path, ": ", std::strerror(errno));
    if (!seen_files_.insert({facts.st_dev, facts.st_ino}).second) {
      ++counts_.same_file;
      return;
    }
    if (facts.st_size == 0) {
      ++counts_.empty;
      return;
    }
    std::string text = read_file(path);
    if (text.empty()) {  // emptied since stat
      ++counts_.empty;
      return;
    }
    // Files of one size and hash are compared byte by byte: a hash collision drops nothing.
    auto& same_hash = by_hash_[{text.size(), std::hash<std::string>{}(text)}];
    for (const std::string& earlier : same_hash) {
      if (read_file(earlier) == text) {
        ++counts_.same_text;
        return;
      }
    }
    same_hash.push_back(path);
    ++counts_.documents;
    document_(path, text);
  }

  const std::function<void(const std::string&, const std::string&)>& document_;
  DocumentCounts counts_;
  std::set<std::pair<dev_t, ino_t>> seen_files_;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::string>> by_hash_;
};

}  // namespace

DocumentCounts for_each_text_document(
    const std::vector<std::string>& inputs,
    const std::function<void(const std::string& path, const std::string& text)>& document) {
  Collector collector(document);
  for (const std::string& input : inputs) collector.input(input);
  return collector.counts();
}

}  // namespace meshslice::dataapp
