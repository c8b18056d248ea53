// dltune's drop-ins at boot: who applies them, and `tune apply --boot` (boot.hpp).
#include "tune/boot.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "host/parse/sysctl_conf.hpp"
#include "settings/data_paths.hpp"
#include "settings/dropins.hpp"
#include "settings/setting.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::tune {

using inventory::Json;

namespace {

constexpr const char* kBootCommand = "dltune tune apply --boot";

// Whether any name in `dir` matches the fnmatch(3) pattern (a runlevel link such as S01procps).
bool any_entry(const host::Root& root, const std::string& dir, const char* pattern) {
  auto names = root.list(dir);
  if (!names || !*names) return false;
  return std::any_of((*names)->begin(), (*names)->end(),
                     [&](const std::string& n) { return ::fnmatch(pattern, n.c_str(), 0) == 0; });
}

// /etc/rc.local, when it runs `dltune tune apply --boot` (a line that is not a comment).
bool rc_local_applies(const host::Root& root) {
  auto lines = root.lines("/etc/rc.local");
  if (!lines || !*lines) return false;
  for (const auto& line : **lines) {
    const auto t = text::trim(line);
    if (!t.starts_with("#") && t.find("tune apply --boot") != std::string_view::npos) return true;
  }
  return false;
}

// The files a sysfs path with a glob names, in the tree (each '*', '?' or '[' component matched
// against the directory's entries, as glob(3) does).
std::vector<std::string> expand(const host::Root& root, const std::string& pattern) {
  std::vector<std::string> found{""};
  for (const auto part : text::split(std::string_view(pattern).substr(1), '/')) {
    std::vector<std::string> next;
    const std::string p(part);
    const bool wild = p.find_first_of("*?[") != std::string::npos;
    for (const auto& dir : found) {
      if (!wild) {
        next.push_back(dir + "/" + p);
        continue;
      }
      auto names = root.list(dir.empty() ? "/" : dir);
      if (!names || !*names) continue;
      auto sorted = **names;
      std::sort(sorted.begin(), sorted.end());
      for (const auto& n : sorted)
        if (::fnmatch(p.c_str(), n.c_str(), FNM_PERIOD) == 0) next.push_back(dir + "/" + n);
    }
    found = std::move(next);
  }
  std::erase_if(found, [&](const std::string& f) { return f.empty() || !root.exists(f); });
  return found;
}

// Writes `value` to `target` unless it is there already.
void write_one(const host::Root& root, BootWrite& w) {
  auto before = root.read(w.target, 65536);
  if (before && *before) w.before = std::string(text::trim(**before));
  if (w.before && settings::effective_value(*w.before) == settings::effective_value(w.value)) {
    w.after = *w.before;
    w.status = BootWrite::Status::kAlready;
    return;
  }
  auto after = root.write_virtual(w.target, w.value);
  if (!after) {
    w.status = BootWrite::Status::kFailed;
    w.why = after.error().message();
    return;
  }
  w.after = *after;
  if (settings::effective_value(w.after) != settings::effective_value(w.value)) {
    w.status = BootWrite::Status::kFailed;
    w.why = fmt::format("the kernel reads back '{}'", w.after);
    return;
  }
  w.status = BootWrite::Status::kWritten;
}

}  // namespace

bool BootReaders::anything_lost() const {
  return std::any_of(files.begin(), files.end(),
                     [](const BootReader& f) { return f.exists && !f.by; });
}

BootReaders boot_readers(const host::Root& root) {
  BootReaders r;
  if (auto comm = root.read("/proc/1/comm", 256); comm && *comm)
    r.init = std::string(text::trim(**comm));
  // sd_booted(3): systemd is the init when /run/systemd/system is a directory.
  const bool systemd = root.exists("/run/systemd/system") || r.init == "systemd";
  const bool sysvinit = !systemd && r.init == "init" && root.exists("/etc/inittab");
  const bool openrc = !systemd && (r.init == "openrc-init" || root.exists("/run/openrc"));
  const bool rc_local = rc_local_applies(root);
  const auto reader = [&](const char* file, std::optional<std::string> by, std::string note) {
    BootReader f;
    f.file = file;
    f.exists = root.exists(file);
    f.by = std::move(by);
    f.note = std::move(note);
    r.files.push_back(std::move(f));
  };
  const std::string hint = fmt::format(
      "this host's init ({}) runs nothing that reads it at boot: the values fall back to the "
      "kernel's defaults at the next boot (tune status then shows them as drift); put `{}` in "
      "the host's boot script (/etc/rc.local, the container's entry point)",
      r.init.empty() ? "unknown" : r.init, kBootCommand);
  // sysctl.d
  if (systemd)
    reader(settings::kSysctlDropin, "systemd-sysctl.service", "");
  else if (sysvinit && any_entry(root, "/etc/rcS.d", "S*procps"))
    reader(settings::kSysctlDropin, "/etc/init.d/procps (sysvinit)", "");
  else if (openrc && any_entry(root, "/etc/runlevels/boot", "sysctl"))
    reader(settings::kSysctlDropin, "OpenRC's sysctl service", "");
  else if (rc_local)
    reader(settings::kSysctlDropin, std::string("/etc/rc.local (") + kBootCommand + ")", "");
  else
    reader(settings::kSysctlDropin, std::nullopt, hint);
  // tmpfiles.d
  if (systemd)
    reader(settings::kTmpfilesDropin, "systemd-tmpfiles-setup.service", "");
  else if (openrc && any_entry(root, "/etc/runlevels/boot", "opentmpfiles-setup"))
    reader(settings::kTmpfilesDropin, "OpenRC's opentmpfiles-setup service", "");
  else if (rc_local)
    reader(settings::kTmpfilesDropin, std::string("/etc/rc.local (") + kBootCommand + ")", "");
  else
    reader(settings::kTmpfilesDropin, std::nullopt, hint);
  // udev rules: read by udevd (systemd-udevd, or eudev's and Debian's udev init scripts) at boot
  // and whenever a disk appears; /run/udev/control is the socket of the one running now.
  if (systemd)
    reader(settings::kUdevDropin, "systemd-udevd.service", "");
  else if ((sysvinit && any_entry(root, "/etc/rcS.d", "S*udev")) ||
           (openrc && any_entry(root, "/etc/runlevels/sysinit", "udev")))
    reader(settings::kUdevDropin, "udevd (the init's udev script)", "");
  else if (root.exists("/run/udev/control"))
    reader(settings::kUdevDropin, "udevd (running now)", "");
  else if (rc_local)
    reader(settings::kUdevDropin, std::string("/etc/rc.local (") + kBootCommand + ")", "");
  else
    reader(settings::kUdevDropin, std::nullopt, hint);
  // Read when it is used, whatever the init (and /etc/fstab by mount at every boot).
  reader(settings::kLimitsDropin, "pam_limits, at each login",
         "services and logins started before it keep their limits");
  return r;
}

Result<BootResult> apply_at_boot(const host::Root& root) {
  BootResult r;
  // /etc/sysctl.d/90-dltune.conf: "key = value"; '-' before a key lets it fail.
  auto sysctl_text = root.read(settings::kSysctlDropin, 1 << 20);
  if (!sysctl_text) return tl::unexpected(sysctl_text.error());
  if (*sysctl_text) {
    const auto raw = text::split(**sysctl_text, '\n');
    for (const auto& a : host::parse::sysctl_conf(**sysctl_text)) {
      BootWrite w;
      w.source = settings::kSysctlDropin;
      w.line = a.line;
      w.kind = "sysctl";
      w.key = a.key;
      w.value = a.value;
      const bool may_fail = a.line >= 1 && static_cast<std::size_t>(a.line) <= raw.size() &&
                            text::trim(raw[static_cast<std::size_t>(a.line) - 1]).starts_with("-");
      auto path = settings::sysctl_path(a.key);
      if (!path) {
        w.status = BootWrite::Status::kSkipped;
        w.why =
            "not a single sysctl name (a glob is for systemd-sysctl): " + path.error().message();
      } else {
        w.target = *path;
        if (!root.exists(w.target)) {
          w.status = may_fail ? BootWrite::Status::kSkipped : BootWrite::Status::kFailed;
          w.why = "this kernel has no " + w.target;
        } else {
          write_one(root, w);
          if (w.status == BootWrite::Status::kFailed && may_fail) {
            w.status = BootWrite::Status::kSkipped;
            w.why = "'-': may fail: " + w.why;
          }
        }
      }
      r.writes.push_back(std::move(w));
    }
  }
  // /etc/tmpfiles.d/90-dltune.conf: "w PATH - - - - VALUE" (tmpfiles.d(5); the other types
  // make files, which dltune never asks for).
  auto tmpfiles = root.lines(settings::kTmpfilesDropin);
  if (!tmpfiles) return tl::unexpected(tmpfiles.error());
  if (*tmpfiles) {
    int n = 0;
    for (const auto& line : **tmpfiles) {
      ++n;
      const auto f = text::fields(line);
      if (f.empty() || f[0].starts_with("#")) continue;
      if (f[0] != "w" && f[0] != "w+") continue;
      if (f.size() < 7) continue;  // nothing to write
      // The argument is the rest of the line from the seventh field.
      std::string value(
          text::trim(line.substr(static_cast<std::size_t>(f[6].data() - line.data()))));
      const std::string pattern(f[1]);
      const auto targets = pattern.find_first_of("*?[") == std::string::npos
                               ? std::vector<std::string>{pattern}
                               : expand(root, pattern);
      if (targets.empty() || (targets.size() == 1 && !root.exists(targets[0]))) {
        BootWrite w;
        w.source = settings::kTmpfilesDropin;
        w.line = n;
        w.kind = "sysfs";
        w.key = pattern;
        w.value = value;
        w.status = BootWrite::Status::kSkipped;
        w.why = "no such file on this host (a disk or CPU that is not there)";
        r.writes.push_back(std::move(w));
        continue;
      }
      for (const auto& t : targets) {
        BootWrite w;
        w.source = settings::kTmpfilesDropin;
        w.line = n;
        w.kind = "sysfs";
        w.key = pattern;
        w.target = t;
        w.value = value;
        write_one(root, w);
        r.writes.push_back(std::move(w));
      }
    }
  }
  // /etc/udev/rules.d/60-dltune.rules: each rule's attribute on the disk that it matches now
  // (by its serial in udev's database, or by name), as udev would when the disk appears.
  auto udev = root.read(settings::kUdevDropin, 1 << 20);
  if (!udev) return tl::unexpected(udev.error());
  if (*udev) {
    std::map<std::string, std::string> disk_of_match;  // looked up once
    if (auto disks = root.list("/sys/block"); disks && *disks)
      for (const auto& disk : **disks)
        disk_of_match.emplace(settings::udev_disk_match(root, disk).match, disk);
    for (const auto& rule : settings::udev_dropin_rules(**udev)) {
      BootWrite w;
      w.source = settings::kUdevDropin;
      w.line = rule.line;
      w.kind = "sysfs";
      w.key = rule.match + " " + rule.attribute;
      w.value = rule.value;
      const auto it = disk_of_match.find(rule.match);
      if (it == disk_of_match.end()) {
        w.status = BootWrite::Status::kSkipped;
        w.why = "no disk on this host matches it";
      } else {
        w.target = "/sys/block/" + it->second + "/" + rule.attribute;
        write_one(root, w);
      }
      r.writes.push_back(std::move(w));
    }
  }
  return r;
}

const char* boot_status_name(BootWrite::Status s) {
  switch (s) {
    case BootWrite::Status::kWritten:
      return "written";
    case BootWrite::Status::kAlready:
      return "already";
    case BootWrite::Status::kFailed:
      return "failed";
    case BootWrite::Status::kSkipped:
      return "skipped";
  }
  return "skipped";
}

int BootResult::count(BootWrite::Status s) const {
  return static_cast<int>(std::count_if(writes.begin(), writes.end(),
                                        [&](const BootWrite& w) { return w.status == s; }));
}

Json to_json(const BootResult& r) {
  Json writes = Json::array();
  for (const auto& w : r.writes) {
    Json x{{"source", w.source},
           {"line", w.line},
           {"kind", w.kind},
           {"key", w.key},
           {"target", w.target},
           {"value", w.value},
           {"status", boot_status_name(w.status)}};
    x["before"] = w.before ? Json(*w.before) : Json(nullptr);
    x["after"] = w.after.empty() ? Json(nullptr) : Json(w.after);
    x["why"] = w.why.empty() ? Json(nullptr) : Json(w.why);
    writes.push_back(std::move(x));
  }
  return Json{{"schema", "dltune.tune.boot/1"},
              {"writes", std::move(writes)},
              {"written", r.count(BootWrite::Status::kWritten)},
              {"already", r.count(BootWrite::Status::kAlready)},
              {"failed", r.count(BootWrite::Status::kFailed)},
              {"skipped", r.count(BootWrite::Status::kSkipped)}};
}

std::string render_text(const BootResult& r) {
  if (r.writes.empty())
    return "dltune tune apply --boot: nothing to write: dltune's sysctl.d, tmpfiles.d and udev "
           "drop-ins hold no value (written by `dltune tune apply --persist`)\n";
  std::string out = "dltune tune apply --boot: the values of dltune's drop-ins, written live\n";
  for (const auto& w : r.writes) {
    const std::string name = w.kind == "sysctl" ? w.key : (w.target.empty() ? w.key : w.target);
    std::string what;
    switch (w.status) {
      case BootWrite::Status::kWritten:
        what = fmt::format("{} -> {}", w.before.value_or("?"), w.after);
        break;
      case BootWrite::Status::kAlready:
        what = "already " + w.after;
        break;
      case BootWrite::Status::kFailed:
        what = fmt::format("FAILED to write {}: {}", w.value, w.why);
        break;
      case BootWrite::Status::kSkipped:
        what = "skipped: " + w.why;
        break;
    }
    out += fmt::format("  {:<8} {:<40} {}  ({}:{})\n", boot_status_name(w.status), name, what,
                       w.source, w.line);
  }
  out += fmt::format("{} written, {} already in place, {} failed, {} skipped\n",
                     r.count(BootWrite::Status::kWritten), r.count(BootWrite::Status::kAlready),
                     r.count(BootWrite::Status::kFailed), r.count(BootWrite::Status::kSkipped));
  return out;
}

Json to_json(const BootReaders& r) {
  Json files = Json::array();
  for (const auto& f : r.files)
    files.push_back(Json{{"file", f.file},
                         {"exists", f.exists},
                         {"applied_by", f.by ? Json(*f.by) : Json(nullptr)},
                         {"note", f.note}});
  return Json{{"init", r.init.empty() ? Json(nullptr) : Json(r.init)}, {"files", files}};
}

std::string render_text(const BootReaders& r) {
  std::string out;
  for (const auto& f : r.files) {
    if (!f.exists) continue;
    if (f.by)
      out += fmt::format("at boot     {}: applied by {}\n", f.file, *f.by);
    else
      out += fmt::format("NOT AT BOOT {}: {}\n", f.file, f.note);
  }
  return out;
}

}  // namespace dltune::tune
