#pragma once
// Helpers for the tests: a scratch directory and checks on UserError messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "core/errors.hpp"

namespace meshslice::test {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "meshslice-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `text` to a file in this directory and returns its full path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// The message of the Error `action` throws; a test failure if it throws nothing or another
// type.
template <class Error>
std::string error_of(const std::function<void()>& action, const char* expected) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a " << expected << ", got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a " << expected << ", nothing was thrown";
  return "";
}

inline std::string user_error_of(const std::function<void()>& action) {
  return error_of<UserError>(action, "UserError");
}

inline void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) {
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in:\n" << text;
  }
}

}  // namespace meshslice::test
