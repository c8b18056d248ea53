// `dltune top --pid` of a Python job shows each of its Python processes' current function, read
// from outside (tui/py_functions.hpp); a job that is not Python shows its command lines as before.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/text.hpp"
#include "support/run.hpp"

using dltune::testing::run;

namespace {

// A child running `argv`, killed at the end of the test.
class Child {
 public:
  explicit Child(std::vector<std::string> argv) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

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
  Child job({"/usr/bin/python3", "-c",
             "def spin_here():\n"
             "    while True:\n"
             "        pass\n"
             "def outer():\n"
             "    spin_here()\n"
             "outer()\n"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string row;
  for (int attempt = 0; attempt < 5 && row.find("py spin_here") == std::string::npos; ++attempt) {
    const auto r = run({DLTUNE_BINARY, "top", "--pid", std::to_string(job.pid()), "--once",
                        "--no-gpus", "--interval", "200ms"},
                       {{"COLUMNS", "200"}}, 60);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    row = row_of(r.out, job.pid());
  }
  EXPECT_NE(row.find(" python3 -c"), std::string::npos) << row;
  EXPECT_NE(row.find(" | py spin_here <string>:"), std::string::npos) << row;
}

TEST(TopPython, AJobThatIsNotPythonShowsItsCommandAndNoNote) {
  Child job({"/bin/sleep", "30"});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto r = run({DLTUNE_BINARY, "top", "--pid", std::to_string(job.pid()), "--once",
                      "--no-gpus", "--interval", "100ms"},
                     {{"COLUMNS", "200"}}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = row_of(r.out, job.pid());
  EXPECT_NE(row.find("/bin/sleep 30"), std::string::npos) << r.out;
  EXPECT_EQ(row.find("py "), std::string::npos) << row;
  EXPECT_EQ(r.out.find("no Python function"), std::string::npos)
      << "not Python is no news: " << r.out;
}
