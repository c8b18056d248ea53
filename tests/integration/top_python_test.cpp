// `dltune top --pid` of a Python job shows each of its Python processes' current function, read
// from outside (tui/py_functions.hpp); a job that is not Python shows its command lines as before.

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/text.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/run.hpp"

namespace top_python_test {

using dltune::testing::Process;
using dltune::testing::run;

namespace {

// The row of `pid` in top's plain output.
std::string row_of(const std::string& out, pid_t pid) {
  const std::string key = std::to_string(pid) + " ";
  for (const auto l : dltune::text::lines(out)) {
    const auto t = dltune::text::trim(l);
    if (t.rfind(key, 0) == 0) return std::string(t);
  }
  return "";
}

}  // namespace

TEST(TopPython, TheJobsPythonProcessesShowTheirCurrentFunction) {
  // A script stopped in a known function: it spins in spin_here, called from outer.
  Process job({"/usr/bin/python3", "-c",
               "def spin_here():\n"
               "    while True:\n"
               "        pass\n"
               "def outer():\n"
               "    spin_here()\n"
               "outer()\n"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string row;
  for (int attempt = 0; attempt < 5 && row.find("py spin_here") == std::string::npos; ++attempt) {
    const auto r = run({DLTUNE_BINARY, "top", "--pid", std::to_string(job.pid), "--once",
                        "--no-gpus", "--interval", "200ms"},
                       {{"COLUMNS", "200"}}, 60);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    row = row_of(r.out, job.pid);
  }
  EXPECT_NE(row.find(" python3 -c"), std::string::npos) << row;
  EXPECT_NE(row.find(" | py spin_here <string>:"), std::string::npos) << row;
}

TEST(TopPython, AJobThatIsNotPythonShowsItsCommandAndNoNote) {
  Process job({"/bin/sleep", "30"});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto r = run({DLTUNE_BINARY, "top", "--pid", std::to_string(job.pid), "--once", "--no-gpus",
                      "--interval", "100ms"},
                     {{"COLUMNS", "200"}}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = row_of(r.out, job.pid);
  EXPECT_NE(row.find("/bin/sleep 30"), std::string::npos) << r.out;
  EXPECT_EQ(row.find("py "), std::string::npos) << row;
  EXPECT_EQ(r.out.find("no Python function"), std::string::npos)
      << "not Python is no news: " << r.out;
}

}  // namespace top_python_test
