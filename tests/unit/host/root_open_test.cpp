// Root::open and OpenFile: files kept open and read again from the start (the sampler's way).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "host/root.hpp"
#include "support/temp_tree.hpp"

namespace root_open_test {

using namespace dltune;

TEST(RootOpen, ReadsTheLiveFileAfreshEachTimeIntoTheSameBuffer) {
  host::Root root;
  auto f = root.open("/proc/self/stat");
  ASSERT_TRUE(f) << f.error().message();
  ASSERT_TRUE(f->has_value());
  std::string buf;
  auto first = (*f)->read(buf);
  ASSERT_TRUE(first && first->has_value());
  EXPECT_TRUE((*first)->starts_with(fmt::format("{} (", ::getpid()))) << **first;
  const auto* data = buf.data();
  // Burn some CPU so that utime or stime moves on; the second read must see the kernel's new
  // text (not a cached copy) in the same storage.
  std::string again;
  for (int round = 0; round < 50 && again == **first; ++round) {
    volatile double x = 0;
    for (int i = 0; i < 3'000'000; ++i) x = x + i * 0.5;
    auto second = (*f)->read(buf);
    ASSERT_TRUE(second && second->has_value());
    again = std::string(**second);
  }
  EXPECT_NE(again, std::string(**first));
  EXPECT_EQ(buf.data(), data) << "the buffer was reallocated for a file that fits it";
}

TEST(RootOpen, GrowsTheBufferForALargeFile) {
  dltune::testing::TempTree t;
  std::string big(200'000, 'x');
  big += "END";
  t.write("proc/big", big);
  auto root = host::Root::at(t.dir());
  ASSERT_TRUE(root);
  auto f = root->open("/proc/big");
  ASSERT_TRUE(f && f->has_value());
  std::string buf;
  auto text = (*f)->read(buf);
  ASSERT_TRUE(text && text->has_value());
  EXPECT_EQ((*text)->size(), big.size());
  EXPECT_TRUE((*text)->ends_with("END"));

  // The buffer keeps its room; a shorter text after a long one is that text alone, and a text
  // that fills the room exactly is read to its end.
  t.write("proc/big", "short\n");
  text = (*f)->read(buf);
  ASSERT_TRUE(text && text->has_value());
  EXPECT_EQ(**text, "short\n");
  EXPECT_GE(buf.size(), big.size());
  const std::string exact(buf.size(), 'y');
  t.write("proc/big", exact);
  text = (*f)->read(buf);
  ASSERT_TRUE(text && text->has_value());
  EXPECT_EQ(**text, exact);
  t.write("proc/big", "");
  text = (*f)->read(buf);
  ASSERT_TRUE(text && text->has_value());
  EXPECT_TRUE((*text)->empty());
}

TEST(RootOpen, AbsentIsEmptyAndAnExitedProcessIsGoneNotAnError) {
  host::Root root;
  auto missing = root.open("/proc/no-such-file");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  auto f = root.open(fmt::format("/proc/{}/stat", child));
  ASSERT_TRUE(f && f->has_value());
  std::string buf;
  auto alive = (*f)->read(buf);
  ASSERT_TRUE(alive && alive->has_value());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);  // reaped: the kernel answers ESRCH
  auto gone = (*f)->read(buf);
  ASSERT_TRUE(gone) << gone.error().message();
  EXPECT_FALSE(gone->has_value());
}

TEST(RootOpen, RefusesPathsOutsideTheKnownLocationsAndTakesInjectedFaults) {
  host::Root root;
  auto outside = root.open("/tmp/x");
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message().find("outside the known locations"), std::string::npos);
  host::Fault fault;
  fault.op = host::FaultOp::kRead;
  fault.path = "/proc/meminfo";
  fault.err = EIO;
  fault.nth = 2;  // the open passes, the first read fails
  root.inject_fault(fault);
  auto f = root.open("/proc/meminfo");
  ASSERT_TRUE(f && f->has_value());
  std::string buf;
  auto r = (*f)->read(buf);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errno_, EIO);
  EXPECT_NE(r.error().message().find("/proc/meminfo"), std::string::npos);
  EXPECT_TRUE((*f)->read(buf));  // only the second call was to fail
}

TEST(RootOpen, ADirectoryKeptOpenListsItsNumericEntriesAfreshEachTime) {
  host::Root root;
  auto dir = root.open_directory(fmt::format("/proc/{}/task", ::getpid()));
  ASSERT_TRUE(dir && dir->has_value());
  std::vector<int> tids;
  auto first = (*dir)->list_pids(tids);
  ASSERT_TRUE(first && *first);
  EXPECT_TRUE(std::binary_search(tids.begin(), tids.end(), ::getpid()));
  const auto before = tids.size();
  std::thread extra([] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); });
  auto second = (*dir)->list_pids(tids);
  ASSERT_TRUE(second && *second);
  EXPECT_EQ(tids.size(), before + 1) << "a thread started since is listed";
  extra.join();
  auto not_dir = root.open_directory("/proc/meminfo");
  ASSERT_FALSE(not_dir);
  EXPECT_EQ(not_dir.error().errno_, ENOTDIR);
}

}  // namespace root_open_test
