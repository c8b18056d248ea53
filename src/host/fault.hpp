#pragma once
// Fault injection, FOR TESTS ONLY (tune, run and record): make one
// operation of host::Root on one path fail with a chosen errno, at the very system call that
// would fail on a real host, so that the code after it (clean-up, the error text, the rollback)
// runs exactly as it would for a read-only file system, a full disk or a failing device.
//
// In a test: `root.inject_fault({host::FaultOp::kAtomicRename, "/etc/sysctl.d/90-dltune.conf",
// EIO})`. For the `dltune` binary: the environment variable DLTUNE_TEST_FAULT (docs/testing.md),
//   DLTUNE_TEST_FAULT="write_atomic.rename:/etc/sysctl.d/90-dltune.conf:EIO;read:/proc/sys/vm/*:EACCES:2"
// i.e. entries `OP:PATH:ERRNO[:N]` separated by ';'. Unset, it costs one null-pointer test per
// operation. To add an operation: one enumerator, one row in the name table of
// fault.cpp, and one `fault(...)` call at the system call it stands for.
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::host {

inline constexpr const char* kFaultHookVariable = "DLTUNE_TEST_FAULT";

enum class FaultOp {
  kRead,              // "read": the open(2) of a file Root::read (or lines) reads
  kWriteVirtualOpen,  // "write_virtual.open": open(2) of a /proc/sys or sysfs file (EACCES, EROFS)
  kWriteVirtual,      // "write_virtual": its one write(2) (EINVAL: a value the kernel refuses)
  kAtomicOpen,        // "write_atomic.open": creating the temporary file next to the target
  kAtomicWrite,       // "write_atomic.write": a write(2) of the content fails at once
  kAtomicShortWrite,  // "write_atomic.short_write": the first write(2) stores only half of what
                      // is left and the next one fails, as on a file system that fills up
  kAtomicFsync,       // "write_atomic.fsync": fsync(2) of the temporary file
  kAtomicRename,      // "write_atomic.rename": rename(2) of the temporary file over the target
  kRemove,            // "remove_file": unlink(2)
  kMakeDirectory,     // "make_directory": mkdir(2) of a job's cgroup (run's set-up)
  kShortRead,         // "read.short": a read (Root::read, OpenFile::read) returns only the first
                      // half of the file, as a file cut short or being rewritten; ERRNO unused
};

struct Fault {
  FaultOp op = FaultOp::kRead;
  // The host path as the caller gives it to Root ("/proc/sys/vm/swappiness"); '*' matches any
  // run of characters, '/' included (fnmatch(3) without flags).
  std::string path;
  int err = EIO;
  int nth = 0;  // 0: every matching call fails; N >= 1: only the Nth matching call
};

[[nodiscard]] std::string_view fault_op_name(FaultOp op);
[[nodiscard]] std::optional<FaultOp> fault_op_from_name(std::string_view name);
// "EIO" -> EIO, for every errno the C library has a name for.
[[nodiscard]] std::optional<int> errno_from_name(std::string_view name);
// `OP:PATH:ERRNO[:N]` entries separated by ';' (empty entries are ignored). The PATH may hold
// ':' (PCI addresses do): OP ends at the first ':', ERRNO and N are taken from the end. An
// unknown operation or errno name, a relative path or an N that is not a positive integer is an
// error that quotes the entry.
[[nodiscard]] Result<std::vector<Fault>> parse_faults(std::string_view spec);

// The faults of one Root and its copies (shared): every call of an operation is checked against
// them. Thread-safe.
class FaultTable {
 public:
  void add(Fault f);
  void clear();
  // The errno that this call of `op` on `path` fails with, or 0. Counts the call.
  [[nodiscard]] int check(FaultOp op, std::string_view path);
  // How many calls failed because of this table (for a test to check that its fault was hit).
  [[nodiscard]] int fired() const;

 private:
  struct Entry {
    Fault fault;
    int calls = 0;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  int fired_ = 0;
};

// The table every Root of the process starts with: null (no fault) unless the program set one.
// The library never reads the environment for it: the command line does, in a build with test
// hooks (DLTUNE_TEST_HOOKS), before it makes any Root.
[[nodiscard]] std::shared_ptr<FaultTable> process_faults();
void set_process_faults(std::shared_ptr<FaultTable> table);

// The table DLTUNE_TEST_FAULT describes: null when it is unset or empty, the parse error (naming
// the variable) when its text is bad.
[[nodiscard]] Result<std::shared_ptr<FaultTable>> faults_from_environment();

}  // namespace dltune::host
