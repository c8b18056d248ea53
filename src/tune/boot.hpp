#pragma once
// What happens to `tune apply --persist` at the next boot. dltune's drop-ins are read at boot by
// others: /etc/sysctl.d by systemd-sysctl (or sysvinit's procps script, OpenRC's sysctl
// service), /etc/tmpfiles.d by systemd-tmpfiles (or OpenRC's opentmpfiles), /etc/udev/rules.d
// by udevd whenever a disk appears, limits.d by pam_limits at each login, /etc/fstab by mount. A
// host without them (no systemd: a container's init, a minimal VM) boots with the kernel's
// defaults and says nothing. `tune status` names each drop-in's reader on this host, or that
// none will read it; `dltune tune apply --boot` is the one line for the host's own boot script:
// it writes what dltune's sysctl.d, tmpfiles.d and udev drop-ins hold, as those readers would.
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "host/root.hpp"

namespace dltune::tune {

// One of dltune's drop-ins and who applies it at boot on this host (/etc/fstab, which tune may
// also change, is mount's at every boot).
struct BootReader {
  std::string file;               // /etc/sysctl.d/90-dltune.conf, ...
  bool exists = false;            // dltune has written it
  std::optional<std::string> by;  // who reads it at boot (or at login); none: nobody
  std::string note;               // why, or what to do
};

// The init that started this host (PID 1's name: systemd, init, openrc-init, ...) and, for each
// drop-in, its reader. From /proc/1/comm, /run/systemd/system (sd_booted(3)'s test), the init
// scripts and runlevel links of sysvinit and OpenRC, and /etc/rc.local naming
// `dltune tune apply --boot`.
struct BootReaders {
  std::string init;  // "" when unknown
  std::vector<BootReader> files;
  // A drop-in that exists and nobody applies at boot.
  [[nodiscard]] bool anything_lost() const;
};
[[nodiscard]] BootReaders boot_readers(const host::Root& root);

// One value of a drop-in, written live by `tune apply --boot`.
struct BootWrite {
  std::string source;  // the drop-in
  int line = 0;        // its line
  std::string kind;    // "sysctl" or "sysfs"
  std::string key;     // the sysctl's name, or the sysfs path as the line has it (a glob)
  std::string target;  // the file written ("" when the line names none that exists)
  std::string value;
  std::optional<std::string> before;  // the value found
  std::string after;                  // read back
  enum class Status { kWritten, kAlready, kFailed, kSkipped } status = Status::kSkipped;
  std::string why;  // the error, or why skipped
};
[[nodiscard]] const char* boot_status_name(BootWrite::Status s);

struct BootResult {
  std::vector<BootWrite> writes;
  [[nodiscard]] int count(BootWrite::Status s) const;
};

// Writes what dltune's sysctl.d and tmpfiles.d drop-ins hold (type `w` lines; a path with a
// glob is each file it matches), one value at a time through the same checked writes as tune,
// and reads each back. Values already in place are left. A value that fails is said and the
// rest still written (a sysctl.d line with '-' may fail, as sysctl.d(5) has it). No journal:
// the drop-ins are the journaled state, and `tune rollback` still restores the values before
// the transaction that wrote them. An error only when a drop-in cannot be read.
[[nodiscard]] Result<BootResult> apply_at_boot(const host::Root& root);

// schema dltune.tune.boot/1, and the text.
[[nodiscard]] inventory::Json to_json(const BootResult& r);
[[nodiscard]] std::string render_text(const BootResult& r);
[[nodiscard]] inventory::Json to_json(const BootReaders& r);
[[nodiscard]] std::string render_text(const BootReaders& r);

}  // namespace dltune::tune
