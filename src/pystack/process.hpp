#pragma once
// A running Python process, found from outside: its interpreter's file from /proc/PID/maps,
// _PyRuntime from that file's ELF symbols plus the load bias, its version (Py_Version in
// memory, else the file's name) and the layout of that version. Reads only: the process is
// never stopped, nothing is written to it.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "pystack/layout.hpp"
#include "pystack/maps.hpp"
#include "pystack/memory.hpp"
#include "pystack/walk.hpp"

namespace dltune::pystack {

struct Interpreter {
  std::string path;  // the file that holds _PyRuntime (python3.11, libpython3.11.so)
  int major = 0, minor = 0, micro = -1;    // micro: -1 when only the file name said the version
  std::uint64_t runtime = 0;               // _PyRuntime's address in the process
  std::optional<std::uint64_t> code_type;  // PyCode_Type's
};

// "python3.11" or "libpython3.11.so.1.0" (also "python3.11d", "libpython3.11d.so") -> 3, 11.
[[nodiscard]] std::optional<std::pair<int, int>> version_from_name(std::string_view file);

// The files worth a look for _PyRuntime, in order: each libpython, then each python executable
// (a libpython-linked executable has only an undefined reference), by path, each once.
[[nodiscard]] std::vector<std::string> interpreter_candidates(const std::vector<Mapping>& maps);

// The interpreter's file that `mapping` (from /proc/PID/maps) maps in process `pid`, read whole.
// On this kernel: the kernel's own link to it (/proc/PID/map_files, for root), else its path as
// the process sees it (/proc/PID/root: a container's python at a path this host lacks), else as
// this host does; a path is read only when it is a regular file with the mapping's inode (no FIFO,
// device or link followed, never more than 256 MiB). In a host tree: the path through the tree's
// /proc/PID/root, else in the tree. Empty when none is there; `refused` then says why a file that
// was there was not read.
[[nodiscard]] Result<std::optional<std::string>> interpreter_file(const host::Root& root, pid_t pid,
                                                                  const Mapping& mapping,
                                                                  std::string* refused = nullptr);

// The mapping of `path` at file offset 0, else its first; null when none.
[[nodiscard]] const Mapping* mapping_of(const std::vector<Mapping>& maps, const std::string& path);

// Where `path` is loaded: the start of its mapping at file offset 0.
[[nodiscard]] std::optional<std::uint64_t> load_start(const std::vector<Mapping>& maps,
                                                      const std::string& path);

// What attach's error says of a process that runs no Python interpreter (an ordinary case for a
// caller that tries every process of a job, not a failure to report).
inline constexpr const char* kNotPython = "is not a Python process";
// Whether attach's `error` is that one.
[[nodiscard]] inline bool not_python(const Error& error) {
  return error.what.find(kNotPython) != std::string::npos;
}

class PythonProcess {
 public:
  // Errors, in the user's words: "process 123 exited", "123 is not a Python process (no
  // _PyRuntime in its mappings)", "Python 3.8: no layout known (knowledge/python_layouts.toml)",
  // "reading PID 123's memory needs root or ...".
  [[nodiscard]] static Result<PythonProcess> attach(const host::Root& root, pid_t pid);

  // One sample of every thread's stack; "process PID exited" once it has.
  [[nodiscard]] Result<std::vector<ThreadStack>> sample();

  [[nodiscard]] const Interpreter& interpreter() const { return interpreter_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  PythonProcess(const host::Root& root, pid_t pid, Interpreter interpreter, PythonLayout layout);
  // Each thread's TID as the process's PID namespace sees it (3.9 and 3.10: from its thread
  // descriptor; 3.11+: native_thread_id, which a process in a PID namespace of its own, as in a
  // container, has from there too) made this host's, through /proc/PID/task/TID/status's
  // NSpid; 3.9/3.10's main thread (_PyRuntime.main_thread) is PID itself. Once the process's
  // tasks were listed, a TID none of them has is 0.
  void host_tids(std::vector<ThreadStack>& threads);
  void read_tids();

  host::Root root_;
  pid_t pid_;
  Interpreter interpreter_;
  std::unique_ptr<ProcessMemory> memory_;  // on the heap: reader_ keeps its address
  bool frame_objects_ = false;
  bool own_pid_namespace_ = false;  // NSpid of /proc/PID/status names more than one PID
  std::optional<std::uint64_t> main_thread_at_;            // &_PyRuntime.main_thread (3.9, 3.10)
  std::uint64_t main_thread_ = 0;                          // its pthread_t, once read
  std::unordered_map<std::uint64_t, std::uint64_t> tids_;  // the process's TID -> this host's
  std::unordered_set<std::uint64_t> unknown_tids_;         // not a task at the last look
  StackReader reader_;
};

// What is missing to read `pid`'s memory, from the kernel's rules for ptrace's read access
// (ptrace(2), "Ptrace access mode checking"; Documentation/admin-guide/LSM/Yama.rst): the
// message for an EPERM.
[[nodiscard]] std::string permission_note(const host::Root& root, pid_t pid);

}  // namespace dltune::pystack
