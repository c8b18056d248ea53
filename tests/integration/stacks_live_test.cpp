// `dltune stacks` and src/pystack on real Python processes: each interpreter this host has
// (Debian's python3.11, and pyenv's 3.9 to 3.13 where they are installed) runs a script
// stopped in known functions (a spinning function under nested calls in the main thread, a
// generator in a thread of its own), and the stacks read from outside must name them with
// their files and lines, in order. Also: a process that exits while sampled, a process that is
// not Python, a version without a layout, no permission, the line tables of real code objects
// against CPython's own reading of them (co_lines() from 3.10, dis.findlinestarts() in 3.9),
// a python in another mount namespace at a path where this host has another file, and pythons
// in PID namespaces of their own.
#include <gtest/gtest.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "pystack/process.hpp"
#include "pystack/walk.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/run.hpp"

namespace dltune::stacks_live_test {
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

// kScript's main thread where `script` runs it, innermost first: spin under c, b, a.
std::vector<pystack::Frame> nested_calls(const std::string& script) {
  return {{"spin", script, 3},
          {"c", script, 5},
          {"b", script, 7},
          {"a", script, 9},
          {"<module>", script, 19}};
}

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
    for (const char* minor : {"3.9", "3.10", "3.11", "3.12", "3.13"}) {
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
  if (pythons.empty()) GTEST_SKIP() << "no python3.9 to 3.13 here";
  for (const auto& python : pythons) {
    SCOPED_TRACE(python);
    Process p({python, script});
    wait_ready(p);
    auto process = pystack::PythonProcess::attach(host::Root(), p.pid);
    ASSERT_TRUE(process) << process.error().message();
    EXPECT_EQ(process->interpreter().major, 3);
    // Before 3.11 there is no co_qualname: a method is named by co_name alone.
    const bool qualified = process->interpreter().minor >= 11;
    Result<std::vector<pystack::ThreadStack>> threads = fail("not read");
    for (int i = 0; i < 5 && !threads; ++i) threads = process->sample();
    ASSERT_TRUE(threads) << threads.error().message();
    ASSERT_EQ(threads->size(), 2u);

    const auto* main = by_tid(*threads, static_cast<std::uint64_t>(p.pid));
    ASSERT_NE(main, nullptr);
    EXPECT_EQ(main->frames, nested_calls(script));

    const auto* worker = &(*threads)[0] == main ? &(*threads)[1] : &(*threads)[0];
    std::string seen;
    for (const auto& t : *threads) {
      seen += fmt::format("\n  thread {}:", t.native_id);
      for (const auto& f : t.frames) seen += fmt::format(" {}:{}", f.function, f.line);
    }
    std::printf("%s (Python 3.%d) read back:%s\n", python.c_str(), process->interpreter().minor,
                seen.c_str());
    ASSERT_GE(worker->frames.size(), 4u);
    EXPECT_EQ(worker->frames[0].function, "ticks");
    EXPECT_EQ(worker->frames[0].file, script);
    EXPECT_GE(worker->frames[0].line, 11);  // almost always 12, in time.sleep
    EXPECT_LE(worker->frames[0].line, 13);
    EXPECT_EQ(worker->frames[1].function, "worker");
    EXPECT_EQ(worker->frames[2].function, qualified ? "Thread.run" : "run");
    EXPECT_EQ(worker->frames.back().function, qualified ? "Thread._bootstrap" : "_bootstrap");
    EXPECT_NE(worker->frames.back().file.find("threading.py"), std::string::npos);
    // The worker's TID is one of the process's threads (3.9 and 3.10 read it from the C
    // library's thread descriptor), and not the main thread's.
    EXPECT_NE(worker->native_id, static_cast<std::uint64_t>(p.pid));
    EXPECT_TRUE(std::filesystem::exists("/proc/" + std::to_string(p.pid) + "/task/" +
                                        std::to_string(worker->native_id)))
        << worker->native_id;
  }
}

TEST(StacksLive, TheCommandDumpsTheOlderVersions) {
  const auto script = write_script("known.py", kScript).string();
  bool any = false;
  for (const char* minor : {"3.9", "3.10"}) {
    const auto python = pyenv_python(minor);
    if (!python) {
      std::printf("no pyenv python%s here: not tried\n", minor);
      continue;
    }
    any = true;
    SCOPED_TRACE(*python);
    Process p({*python, script});
    wait_ready(p);
    const auto pid = std::to_string(p.pid);
    const auto text = run({DLTUNE_BINARY, "stacks", "--pid", pid});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(std::string("Python ") + minor), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("(native " + pid + ")\n    spin (" + script + ":3)\n    c (" + script +
                            ":5)\n    b (" + script + ":7)\n    a (" + script +
                            ":9)\n    <module> (" + script + ":19)"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("    ticks (" + script + ":"), std::string::npos) << text.out;
  }
  if (!any) GTEST_SKIP() << "no pyenv python3.9 or 3.10 here";
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
  EXPECT_EQ(r.exit_code, 2);  // the --pid is wrong: bad input, as top, record and profile say
  EXPECT_EQ(r.err,
            "dltune stacks: " + pid + " is not a Python process (no _PyRuntime in its mappings)\n");

  const auto gone = run({DLTUNE_BINARY, "stacks", "--pid", "4000000"});
  EXPECT_EQ(gone.exit_code, 2) << gone.err;
  EXPECT_EQ(gone.err, "dltune stacks: --pid 4000000: no such process\n");

  // A kernel thread (kthreadd, PID 2) has no memory of its own: not "exited".
  const auto kernel = run({DLTUNE_BINARY, "stacks", "--pid", "2"});
  EXPECT_EQ(kernel.exit_code, 2) << kernel.err;
  EXPECT_NE(kernel.err.find("2 is not a Python process (it is the kernel thread kthreadd)"),
            std::string::npos)
      << kernel.err;

  const auto script = write_script("known.py", kScript).string();
  if (const auto old = pyenv_python("3.8")) {
    Process p({*old, script});
    wait_ready(p);
    const auto unknown = run({DLTUNE_BINARY, "stacks", "--pid", std::to_string(p.pid)});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.err.find("Python 3.8: no layout known (knowledge/python_layouts.toml)"),
              std::string::npos)
        << unknown.err;
  } else {
    std::printf("no pyenv python3.8 here: the refusal of a version without a layout not tried\n");
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

// The line table decoders against CPython's own reading of the tables, at every instruction of
// real code objects: co_lines() (3.10: byte ranges of co_linetable in the PEP 626 format; 3.11+:
// of the location table), and in 3.9, which has no co_lines(), dis.findlinestarts() over
// co_lnotab (each instruction has the line of the last start at or before it). The offsets are
// bytes for 3.9 and 3.10 and code units from 3.11 on, as each decoder takes them.
TEST(StacksLive, TheLineTableDecodersAgreeWithCPython) {
  const auto dump =
      write_script("lines.py", R"(import argparse, bisect, dis, json, sys, threading, json.decoder
def walk(code, out):
    out.append(code)
    for c in code.co_consts:
        if hasattr(c, "co_code"): walk(c, out)
codes = []
for m in (threading, json.decoder, dis, argparse):
    for v in vars(m).values():
        for x in list(vars(v).values()) if isinstance(v, type) else [v]:
            f = getattr(x, "__code__", None)
            if f is not None: walk(f, codes)
v = sys.version_info[:2]
rows = []
for code in codes:
    lines = []
    if v >= (3, 10):
        table = code.co_linetable
        for start, end, line in code.co_lines():
            for i in range(start, end, 2): lines.append((i // 2 if v >= (3, 11) else i, line))
    else:
        table = code.co_lnotab
        starts = list(dis.findlinestarts(code))
        addrs = [a for a, _ in starts]
        for i in range(0, len(code.co_code), 2):
            k = bisect.bisect_right(addrs, i) - 1
            lines.append((i, starts[k][1] if k >= 0 else code.co_firstlineno))
    rows.append({"first": code.co_firstlineno, "table": table.hex(), "lines": lines})
print(json.dumps({"minor": v[1], "rows": rows}))
)");
  const auto pythons = interpreters();
  if (pythons.empty()) GTEST_SKIP() << "no python3.9 to 3.13 here";
  for (const auto& python : pythons) {
    SCOPED_TRACE(python);
    const auto r = run({python, dump.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = json::parse(r.out);
    const int minor = doc["minor"];
    const auto& rows = doc["rows"];
    ASSERT_GT(rows.size(), 50u);
    std::size_t checked = 0, without_line = 0;
    for (const auto& row : rows) {
      std::string table;
      const std::string hex = row["table"];
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        table += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
      for (const auto& pair : row["lines"]) {
        const int first = row["first"];
        const std::int64_t at = pair[0];
        const auto got = minor == 9    ? pystack::line_of_lnotab(table, first, at)
                         : minor == 10 ? pystack::line_of_pep626(table, first, at)
                                       : pystack::line_of(table, first, at);
        ASSERT_TRUE(got) << got.error().message();
        const std::optional<int> want =
            pair[1].is_null() ? std::nullopt : std::optional<int>(pair[1].get<int>());
        if (!want) ++without_line;
        ASSERT_EQ(*got, want) << (minor < 11 ? "byte " : "code unit ") << at
                              << " of a code object at line " << first;
        ++checked;
      }
    }
    EXPECT_GT(checked, 1000u);
    std::printf("%s: %zu instructions checked (%zu without a line)\n", python.c_str(), checked,
                without_line);
  }
}

// A python in another mount namespace (as in a container) whose file this host has another
// file at: the process runs /tmp/.../bin/python3.11 from a tmpfs mounted in its own namespace;
// this host's file at that path is not an interpreter. The stacks are read through
// /proc/PID/root, the process's own view.
TEST(StacksLive, APythonInAnotherMountNamespaceIsReadThroughItsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "mount namespaces need root here";
  if (!std::filesystem::exists("/usr/bin/unshare")) GTEST_SKIP() << "no unshare (util-linux)";
  if (!std::filesystem::exists("/usr/bin/python3.11")) GTEST_SKIP() << "no /usr/bin/python3.11";
  const auto probe = run({"/usr/bin/unshare", "--mount", "/bin/true"});
  if (probe.exit_code != 0) {
    std::printf("unshare --mount is not allowed here: %s\n", probe.err.c_str());
    GTEST_SKIP() << "unshare --mount is not allowed here: " << probe.err;
  }
  const auto script = write_script("known.py", kScript).string();
  const auto dir = std::filesystem::path(script).parent_path() / "ns" / "bin";
  std::filesystem::create_directories(dir);
  const auto python = (dir / "python3.11").string();
  std::ofstream(python) << "not an interpreter: this host's file at the process's path\n";
  Process p({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
             "mount -t tmpfs dltune-test " + dir.string() + " && cp /usr/bin/python3.11 " + python +
                 " && exec " + python + " " + script});
  wait_ready(p);
  // The process sees its own python there; this host still sees the decoy.
  std::ifstream host_file(python);
  std::string first_line;
  std::getline(host_file, first_line);
  ASSERT_EQ(first_line, "not an interpreter: this host's file at the process's path");

  auto process = pystack::PythonProcess::attach(host::Root(), p.pid);
  ASSERT_TRUE(process) << process.error().message();
  EXPECT_EQ(process->interpreter().path, python);
  EXPECT_EQ(process->interpreter().minor, 11);
  Result<std::vector<pystack::ThreadStack>> threads = fail("not read");
  for (int i = 0; i < 5 && !threads; ++i) threads = process->sample();
  ASSERT_TRUE(threads) << threads.error().message();
  const auto* main = by_tid(*threads, static_cast<std::uint64_t>(p.pid));
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->frames, nested_calls(script));

  const auto text = run({DLTUNE_BINARY, "stacks", "--pid", std::to_string(p.pid)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("    spin (" + script + ":3)\n    c (" + script + ":5)"),
            std::string::npos)
      << text.out;
}

// A python in a PID namespace of its own (as in a container) knows its threads by that
// namespace's TIDs (its main thread is 1 there); the stacks name them by this host's, through
// NSpid, so that the main thread is the process's PID here.
TEST(StacksLive, APythonInAPidNamespaceOfItsOwnHasThisHostsThreadIds) {
  if (::geteuid() != 0) GTEST_SKIP() << "PID namespaces need root here";
  if (!std::filesystem::exists("/usr/bin/unshare")) GTEST_SKIP() << "no unshare (util-linux)";
  const auto probe = run({"/usr/bin/unshare", "--pid", "--fork", "/bin/true"});
  if (probe.exit_code != 0) {
    std::printf("unshare --pid is not allowed here: %s\n", probe.err.c_str());
    GTEST_SKIP() << "unshare --pid is not allowed here: " << probe.err;
  }
  const auto script = write_script("known.py", kScript).string();
  const auto pythons = interpreters();
  if (pythons.empty()) GTEST_SKIP() << "no python3.9 to 3.13 here";
  for (const auto& python : pythons) {
    SCOPED_TRACE(python);
    Process p({"/usr/bin/unshare", "--pid", "--fork", python, script});
    wait_ready(p);
    // unshare --fork waits for its child, the python (PID 1 in the new namespace).
    std::ifstream children("/proc/" + std::to_string(p.pid) + "/task/" + std::to_string(p.pid) +
                           "/children");
    pid_t child = 0;
    ASSERT_TRUE(children >> child) << "no child of unshare";
    std::ifstream status("/proc/" + std::to_string(child) + "/status");
    std::string line, nspid;
    while (std::getline(status, line))
      if (line.starts_with("NSpid:")) nspid = line;
    ASSERT_EQ(nspid, "NSpid:\t" + std::to_string(child) + "\t1");

    auto process = pystack::PythonProcess::attach(host::Root(), child);
    ASSERT_TRUE(process) << process.error().message();
    Result<std::vector<pystack::ThreadStack>> threads = fail("not read");
    for (int i = 0; i < 5 && !threads; ++i) threads = process->sample();
    ASSERT_TRUE(threads) << threads.error().message();
    ASSERT_EQ(threads->size(), 2u);
    const auto* main = by_tid(*threads, static_cast<std::uint64_t>(child));
    ASSERT_NE(main, nullptr) << "no thread " << child << ": " << (*threads)[0].native_id << ", "
                             << (*threads)[1].native_id;
    ASSERT_FALSE(main->frames.empty());
    EXPECT_EQ(main->frames[0], (pystack::Frame{"spin", script, 3}));
    const auto* worker = &(*threads)[0] == main ? &(*threads)[1] : &(*threads)[0];
    EXPECT_TRUE(std::filesystem::exists("/proc/" + std::to_string(child) + "/task/" +
                                        std::to_string(worker->native_id)))
        << worker->native_id;
    EXPECT_NE(worker->native_id, static_cast<std::uint64_t>(child));
    ASSERT_FALSE(worker->frames.empty());
    EXPECT_EQ(worker->frames[0].function, "ticks");
  }
}

}  // namespace
}  // namespace dltune::stacks_live_test
