#pragma once
// A whole file mapped read-only (mmap): a dataset's tokens are read where they lie, so a rank
// touches only the pages of the samples it reads and many ranks on a node share one page cache.
#include <cstdint>
#include <string>

namespace meshslice::data {

class MappedFile {
 public:
  // A UserError naming `path` and what it is (`role`, e.g. "the dataset's index") when the file
  // cannot be opened or mapped.
  MappedFile(std::string path, const std::string& role);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  // nullptr for an empty file (mmap cannot map zero bytes).
  const unsigned char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  void release();
  std::string path_;
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace meshslice::data
