#include "hardware/install_layout.hpp"

namespace meshslice::hw {

std::filesystem::path installed_data_dir() {
#ifdef MESHSLICE_DATA_FROM_BIN
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return exe.parent_path() / MESHSLICE_DATA_FROM_BIN;
#endif
  return {};
}

}  // namespace meshslice::hw
