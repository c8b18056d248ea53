// `dltune stacks` and src/pystack on real Python processes: each interpreter this host has
// (Debian's python3.11, and pyenv's 3.11 to 3.13 where they are installed) runs a script
// stopped in known functions (a spinning function under nested calls in the main thread, a
// generator in a thread of its own), and the stacks read from outside must name them with
// their files and lines, in order. Also: a process that exits while sampled, a process that is
// not Python, a version without a layout, no permission, and the line tables of real code
// objects against CPython's own co_lines().
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "pystack/process.hpp"
#include "pystack/walk.hpp"
#include "support/process.hpp"
#include "support/run.hpp"

namespace dltune {
namespace {

using nlohmann::json;
using testing::Process;
using testing::run;

// Line numbers matter: the tests name them.
constexpr const char* kScript = R"(import sys, threading, time
def spin():
    while True: pass
def c():
    spin()
def b():
    c()
def a():
    b()
def ticks():
    while True:
        time.sleep(0.005)
        yield 1
def worker():
    for _ in ticks():
        pass
threading.Thread(target=worker, name="worker").start()
print("ready", file=sys.stderr, flush=True)
a()
)";

std::filesystem::path write_script(const std::string& name, const std::string& text) {
  const auto dir =
      std::filesystem::path(::testing::TempDir()) / ("dltune_stacks_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

// The interpreters to try: Debian's, then pyenv's of each version with a layout.
std::vector<std::string> interpreters() {
  std::vector<std::string> out;
  if (std::filesystem::exists("/usr/bin/python3.11")) out.emplace_back("/usr/bin/python3.11");
  const std::filesystem::path pyenv = "/root/.pyenv/versions";
  std::error_code ec;
  for (const auto& v : std::filesystem::directory_iterator(pyenv, ec)) {
    const auto name = v.path().filename().string();
    for (const char* minor : {"3.11", "3.12", "3.13"}) {
      const auto exe = v.path() / "bin" / (std::string("python") + minor);
      if (name.starts_with(std::string(minor) + ".") && std::filesystem::exists(exe))
        out.push_back(exe.string());
    }
  }
  return out;
}

std::optional<std::string> pyenv_python(const std::string& minor) {
  std::error_code ec;
  for (const auto& v : std::filesystem::directory_iterator("/root/.pyenv/versions", ec)) {
    const auto exe = v.path() / "bin" / ("python" + minor);
    if (v.path().filename().string().starts_with(minor + ".") && std::filesystem::exists(exe))
      return exe.string();
  }
  return std::nullopt;
}

void wait_ready(Process& p) {
  ASSERT_GT(p.pid, 0);
  ASSERT_TRUE(p.wait_for(std::regex("ready"), std::chrono::seconds(20))) << p.rest_of_stderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

const pystack::ThreadStack* by_tid(const std::vector<pystack::ThreadStack>& threads,
                                   std::uint64_t tid) {
  for (const auto& t : threads)
    if (t.native_id == tid) return &t;
  return nullptr;
}

TEST(StacksLive, EachInterpreterReadsBackTheKnownFunctionsFilesAndLines) {
  const auto script = write_script("known.py", kScript).string();
  const auto pythons = interpreters();
  if (pythons.empty()) GTEST_SKIP() << "no python3.11, 3.12 or 3.13 here";
  for (const auto& python : pythons) {
    SCOPED_TRACE(python);
    Process p({python, script});
    wait_ready(p);
    auto process = pystack::PythonProcess::attach(host::Root(), p.pid);
    ASSERT_TRUE(process) << process.error().message();
    EXPECT_EQ(process->interpreter().major, 3);
    Result<std::vector<pystack::ThreadStack>> threads = fail("not read");
    for (int i = 0; i < 5 && !threads; ++i) threads = process->sample();
    ASSERT_TRUE(threads) << threads.error().message();
    ASSERT_EQ(threads->size(), 2u);

    const auto* main = by_tid(*threads, static_cast<std::uint64_t>(p.pid));
    ASSERT_NE(main, nullptr);
    const std::vector<pystack::Frame> want = {{"spin", script, 3},
                                              {"c", script, 5},
                                              {"b", script, 7},
                                              {"a", script, 9},
                                              {"<module>", script, 19}};
    EXPECT_EQ(main->frames, want);

    const auto* worker = &(*threads)[0] == main ? &(*threads)[1] : &(*threads)[0];
    ASSERT_GE(worker->frames.size(), 4u);
    EXPECT_EQ(worker->frames[0].function, "ticks");
    EXPECT_EQ(worker->frames[0].file, script);
    EXPECT_GE(worker->frames[0].line, 11);  // almost always 12, in time.sleep
    EXPECT_LE(worker->frames[0].line, 13);
    EXPECT_EQ(worker->frames[1].function, "worker");
    EXPECT_EQ(worker->frames[2].function, "Thread.run");
    EXPECT_EQ(worker->frames.back().function, "Thread._bootstrap");
    EXPECT_NE(worker->frames.back().file.find("threading.py"), std::string::npos);
  }
}

TEST(StacksLive, TheCommandDumpsAndSamples) {
  const auto script = write_script("known.py", kScript).string();
  Process p({"/usr/bin/python3.11", script});
  wait_ready(p);
  const auto pid = std::to_string(p.pid);

  const auto text = run({DLTUNE_BINARY, "stacks", "--pid", pid});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Python 3.11"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find("(native " + pid + ")\n    spin (" + script + ":3)\n    c (" + script + ":5)"),
      std::string::npos)
      << text.out;

  const auto dumped = run({DLTUNE_BINARY, "stacks", "--pid", pid, "--json"});
  ASSERT_EQ(dumped.exit_code, 0) << dumped.err;
  const auto j = json::parse(dumped.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << dumped.out;
  EXPECT_EQ(j["pid"], p.pid);
  ASSERT_EQ(j["threads"].size(), 2u);
  bool found = false;
  for (const auto& t : j["threads"]) {
    if (t["native_id"] != p.pid) continue;
    found = true;
    EXPECT_EQ(t["frames"][0]["function"], "spin");
    EXPECT_EQ(t["frames"][0]["line"], 3);
    EXPECT_EQ(t["frames"][4]["function"], "<module>");
  }
  EXPECT_TRUE(found) << dumped.out;

  const auto sampled = run({DLTUNE_BINARY, "stacks", "--pid", pid, "--duration", "1s"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  const std::string stack = "thread " + pid + ";<module> (" + script + ":19);a (" + script +
                            ":9);b (" + script + ":7);c (" + script + ":5);spin (" + script +
                            ":3) ";
  EXPECT_NE(sampled.out.find(stack), std::string::npos) << sampled.out;
  EXPECT_TRUE(std::regex_search(sampled.err, std::regex(R"(\d+ samples in 1\.\d s \(\d+ skipped)")))
      << sampled.err;
  EXPECT_NE(sampled.err.find("of a core"), std::string::npos) << sampled.err;

  const auto speedscope =
      run({DLTUNE_BINARY, "stacks", "--pid", pid, "--duration", "300ms", "--format", "speedscope"});
  ASSERT_EQ(speedscope.exit_code, 0) << speedscope.err;
  const auto s = json::parse(speedscope.out, nullptr, false);
  ASSERT_FALSE(s.is_discarded());
  EXPECT_EQ(s["profiles"].size(), 2u);
  EXPECT_EQ(s["profiles"][0]["type"], "sampled");
  EXPECT_FALSE(s["shared"]["frames"].empty());

  EXPECT_EQ(run({DLTUNE_BINARY, "stacks", "--pid", pid, "--rate", "50"}).exit_code, 2);
  EXPECT_EQ(run({DLTUNE_BINARY, "stacks", "--pid", pid, "--duration", "1s", "--json"}).exit_code,
            2);
}

TEST(StacksLive, AProcessThatExitsWhileSampledEndsTheWindowWithANote) {
  const auto script = write_script(
      "exits.py",
      "import sys, time\nprint('ready', file=sys.stderr, flush=True)\nt = time.time()\n"
      "while time.time() - t < 0.8: pass\n");
  Process p({"/usr/bin/python3.11", script.string()});
  wait_ready(p);
  const auto r = run({DLTUNE_BINARY, "stacks", "--pid", std::to_string(p.pid), "--duration", "5s"});
  EXPECT_EQ(r.term_signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("process " + std::to_string(p.pid) + " exited"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("<module>"), std::string::npos) << r.out;
}

TEST(StacksLive, NotPythonUnknownVersionNoProcessAndNoPermissionAreSaid) {
  Process sleeper({"/bin/sleep", "30"});
  ASSERT_GT(sleeper.pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto pid = std::to_string(sleeper.pid);
  const auto r = run({DLTUNE_BINARY, "stacks", "--pid", pid});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "dltune stacks: " + pid + " is not a Python process (no _PyRuntime in its mappings)\n");

  const auto gone = run({DLTUNE_BINARY, "stacks", "--pid", "4000000"});
  EXPECT_EQ(gone.exit_code, 1) << gone.err;
  EXPECT_NE(gone.err.find("no process 4000000"), std::string::npos) << gone.err;

  const auto script = write_script("known.py", kScript).string();
  if (const auto old = pyenv_python("3.10")) {
    Process p({*old, script});
    wait_ready(p);
    const auto unknown = run({DLTUNE_BINARY, "stacks", "--pid", std::to_string(p.pid)});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.err.find("Python 3.10: no layout known (knowledge/python_layouts.toml)"),
              std::string::npos)
        << unknown.err;
  }

  if (::geteuid() == 0 && std::filesystem::exists("/usr/bin/setpriv")) {
    Process p({"/usr/bin/python3.11", script});
    wait_ready(p);
    const auto denied = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             DLTUNE_BINARY, "stacks", "--pid", std::to_string(p.pid)});
    EXPECT_EQ(denied.exit_code, 1) << denied.err;
    EXPECT_EQ(denied.err, "dltune stacks: reading PID " + std::to_string(p.pid) +
                              "'s memory needs root (it runs as uid 0, you are uid 65534)\n");
  }
}

// line_of against CPython's own co_lines() for every code unit of real code objects.
TEST(StacksLive, TheLineTableDecoderAgreesWithCoLines) {
  const auto dump = write_script("lines.py", R"(import dis, json, sys, threading, json.decoder
def walk(code, out):
    out.append(code)
    for c in code.co_consts:
        if hasattr(c, "co_code"): walk(c, out)
codes = []
for m in (threading, json.decoder, dis):
    for v in vars(m).values():
        f = getattr(v, "__code__", None)
        if f is not None: walk(f, codes)
rows = []
for code in codes:
    lines = []
    for start, end, line in code.co_lines():
        for i in range(start // 2, end // 2): lines.append((i, line))
    rows.append({"first": code.co_firstlineno, "table": code.co_linetable.hex(), "lines": lines})
print(json.dumps(rows))
)");
  for (const auto& python : interpreters()) {
    SCOPED_TRACE(python);
    const auto r = run({python, dump.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = json::parse(r.out);
    ASSERT_GT(rows.size(), 50u);
    std::size_t checked = 0;
    for (const auto& row : rows) {
      std::string table;
      const std::string hex = row["table"];
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        table += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
      for (const auto& pair : row["lines"]) {
        const auto got = pystack::line_of(table, row["first"], pair[0]);
        ASSERT_TRUE(got) << got.error().message();
        const std::optional<int> want =
            pair[1].is_null() ? std::nullopt : std::optional<int>(pair[1].get<int>());
        ASSERT_EQ(*got, want) << "code unit " << pair[0] << " of a code object at line "
                              << row["first"];
        ++checked;
      }
    }
    EXPECT_GT(checked, 1000u);
  }
}

}  // namespace
}  // namespace dltune
