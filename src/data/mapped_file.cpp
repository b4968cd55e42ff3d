#include "data/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/errors.hpp"

namespace meshslice::data {

namespace {

// Closes the descriptor on every path out: the mapping stays valid without it.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(std::string path, const std::string& role) : path_(std::move(path)) {
  const auto failure = [&](const char* what) {
    return UserError(concat("cannot ", what, " ", role, " ", path_, " (", std::strerror(errno),
                            "): check the dataset prefix and that the file is readable"));
  };
  const Descriptor file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw failure("open");
  struct stat facts {};
  if (::fstat(file.fd, &facts) != 0) throw failure("examine");
  require(S_ISREG(facts.st_mode), role, " ", path_, " is not a regular file");
  size_ = static_cast<std::uint64_t>(facts.st_size);
  if (size_ == 0) return;
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, file.fd, 0);
  if (mapped == MAP_FAILED) throw failure("map");
  data_ = static_cast<const unsigned char*>(mapped);
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace meshslice::data
