#pragma once
// A throw-away host tree for tests: files, links and FIFOs under a fresh temporary directory,
// removed at the end of the test.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "host/root.hpp"

namespace dltune::testing {

class TempTree {
 public:
  TempTree() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("dltune_tree_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
            (info ? info->name() : "x"));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "proc");
    std::filesystem::create_directories(dir_ / "sys");
    std::filesystem::create_directories(dir_ / "etc");
  }
  ~TempTree() { std::filesystem::remove_all(dir_); }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  TempTree& write(const std::string& rel, const std::string& content) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << content;
    return *this;
  }
  TempTree& link(const std::string& rel, const std::string& target) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::filesystem::create_symlink(target, dir_ / rel);
    return *this;
  }
  TempTree& mkdir(const std::string& rel) {
    std::filesystem::create_directories(dir_ / rel);
    return *this;
  }
  // A FIFO: a path that exists but that Root refuses to read (EINVAL), even as root.
  TempTree& unreadable(const std::string& rel) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    ::mkfifo((dir_ / rel).c_str(), 0600);
    return *this;
  }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] host::Root root() const {
    auto r = host::Root::at(dir_);
    EXPECT_TRUE(r.has_value());
    return r ? *r : host::Root();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace dltune::testing
