// Scratch files for tests: a new path on every call, removed when the test program exits.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace oid::testing {

/// The scratch paths a test program handed out, removed (files, or directories with what is in
/// them) when the program exits: a test that fails half way, or that keeps its directory to look
/// at, leaves nothing in the temporary directory. Only by the process that made them: a forked
/// child that exits must not remove its parent's files.
class scratch_paths {
 public:
  static scratch_paths& instance() {
    static scratch_paths paths;
    return paths;
  }
  void add(std::string path) {
    std::lock_guard lock(mutex_);
    paths_.push_back(std::move(path));
  }
  ~scratch_paths() {
    if (getpid() != owner_) return;
    for (const auto& p : paths_) {
      std::error_code ignored;
      std::filesystem::remove_all(p, ignored);
    }
  }

 private:
  scratch_paths() = default;
  const pid_t owner_ = getpid();
  std::mutex mutex_;
  std::vector<std::string> paths_;
};

/// A path for a scratch file, new on every call: ctest runs tests in parallel processes, and a
/// process id comes back in a later run, when what an earlier test left may still be there (a
/// directory made with mkdir then fails), so a random number joins it. Removed at exit.
inline std::string scratch_path(std::string_view name) {
  static const std::string process = [] {
    std::random_device random;
    return std::to_string(getpid()) + "_" + std::to_string(random());
  }();
  static std::atomic<int> calls = 0;
  std::string path = ::testing::TempDir() + "oid_" + process + "_" + std::to_string(calls++) + "_" +
                     std::string(name);
  scratch_paths::instance().add(path);
  return path;
}

}  // namespace oid::testing
