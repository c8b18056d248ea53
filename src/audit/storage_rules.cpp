// The storage under the training data: what kind of device or network file system holds it
// (storage.data_device), and whether anything trims its SSD (storage.trim).
#include <algorithm>

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/data_paths.hpp"

namespace dltune::audit {

namespace {

// The value of `name=` among a mount's options ("rsize=1048576"), when given.
std::optional<std::uint64_t> storage_option_number(const inventory::FileSystem& fs,
                                                   std::string_view name) {
  for (const auto& o : fs.options)
    if (o.size() > name.size() && o.starts_with(name) && o[name.size()] == '=')
      return text::to_uint(std::string_view(o).substr(name.size() + 1));
  return std::nullopt;
}

bool storage_is_nfs(const std::string& fstype) {
  return fstype == "nfs" || fstype == "nfs4";
}

bool storage_is_smb(const std::string& fstype) {
  return fstype == "cifs" || fstype == "smb3" || fstype == "smbfs";
}

// What runs fstrim now and then: systemd's fstrim.timer when enabled (util-linux ships it), or
// a cron job that names fstrim (Debian's older util-linux and other distributions' packages).
std::optional<std::string> storage_periodic_trim(const host::Root& root) {
  for (const char* timer : {"/etc/systemd/system/timers.target.wants/fstrim.timer",
                            "/etc/systemd/system/multi-user.target.wants/fstrim.timer"})
    if (root.exists(timer)) return std::string(timer);
  for (const char* dir :
       {"/etc/cron.weekly", "/etc/cron.daily", "/etc/cron.monthly", "/etc/cron.d"}) {
    auto names = root.list(dir);
    if (!names || !*names) continue;
    for (const auto& n : **names) {
      const std::string path = std::string(dir) + "/" + n;
      if (n.find("fstrim") != std::string::npos) return path;
      if (std::string(dir) != "/etc/cron.d") continue;
      auto text = root.read(path, 65536);
      if (text && *text && (*text)->find("fstrim") != std::string::npos) return path;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Finding> storage_data_device(const AuditInput& in,
                                         const settings::ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = settings::check_data_paths(in.facts, in.data_paths);
  for (const auto& d : settings::data_file_systems(in.root, in.facts, paths)) {
    const auto& fs = *d.fs;
    std::vector<Evidence> ev = {
        {"/proc/self/mountinfo", fmt::format("{} on {} type {} ({})", fs.device, fs.mount_point,
                                             fs.fstype, text::join(fs.options, ","))}};
    std::string kind;
    bool virtual_disk = false;
    std::vector<std::string> actions;
    if (storage_is_nfs(fs.fstype)) {
      kind = "NFS";
      const auto nconnect = storage_option_number(fs, "nconnect");
      const auto rsize = storage_option_number(fs, "rsize");
      if (!nconnect || *nconnect < 2)
        actions.push_back(
            "mount it with nconnect=8 (several TCP connections to the server: nfs(5), Linux 5.3 "
            "and later)");
      if (rsize && *rsize < (1U << 20))
        actions.push_back(fmt::format(
            "mount it with rsize=1048576 (reads of {} KiB now; the server may lower it)",
            *rsize / 1024));
    } else if (storage_is_smb(fs.fstype)) {
      kind = "SMB/CIFS";
    } else if (d.disk && inventory::is_virtual_disk(*d.disk)) {
      virtual_disk = true;
    } else if (d.disk) {
      const auto* b = in.facts.storage.block_device(*d.disk);
      if (b != nullptr && b->rotational && *b->rotational) {
        kind = "a rotational disk";
        ev.push_back({"/sys/block/" + *d.disk + "/queue/rotational", "1"});
      } else if (b != nullptr && b->rotational) {
        ev.push_back({"/sys/block/" + *d.disk + "/queue/rotational", "0"});
      }
    }
    const bool slow = !kind.empty() && (kind != "NFS" || !actions.empty());
    Finding f = settings::judge(entry, "storage", slow ? "false" : "true", std::move(ev));
    if (kind.empty()) {
      f.actual = virtual_disk ? fmt::format("{} ({}, a virtual disk)", fs.mount_point, *d.disk)
                 : d.disk     ? fmt::format("{} ({}, not rotational)", fs.mount_point, *d.disk)
                              : fmt::format("{} ({})", fs.mount_point, fs.fstype);
      f.summary =
          fmt::format("{} holds the data on {}", fs.mount_point,
                      virtual_disk ? "a virtual disk (the medium under it is the hypervisor's)"
                      : d.disk     ? "a solid-state disk"
                                   : fs.fstype);
    } else if (kind == "NFS" && actions.empty()) {
      f.actual = fmt::format("{} (NFS, nconnect and rsize set)", fs.mount_point);
      f.summary = fmt::format("{} holds the data on NFS with several connections and 1 MiB reads",
                              fs.mount_point);
    } else {
      f.actual = fmt::format("{} ({})", fs.mount_point, kind);
      f.summary = fmt::format(
          "{} holds the data on {}: every epoch reads it again{}", fs.mount_point, kind,
          kind == "a rotational disk" ? ", and shuffled samples make the reads random (seeks)"
                                      : " over the network unless the page cache holds it");
      actions.push_back(
          "stage the dataset to a local NVMe or SSD file system before training (or cache it "
          "there on the first epoch)");
      f.fix = settings::Fix{text::join(actions, "; "), false};
    }
    // The page cache's share: what the file system holds against what memory could cache
    // (MemAvailable, proc(5): page cache and reclaimable memory the kernel can give without
    // swapping). The dataset is at most what the file system holds: a note, not a verdict.
    const auto& mem = in.facts.memory;
    if (fs.total_bytes && fs.free_bytes && *fs.total_bytes > *fs.free_bytes &&
        mem.available_bytes) {
      const std::uint64_t used = *fs.total_bytes - *fs.free_bytes;
      if (used > *mem.available_bytes)
        f.notes.push_back(fmt::format(
            "{} holds {}; the page cache can keep at most {} (MemAvailable) of it: a dataset "
            "larger than that is read from {} again every epoch",
            fs.mount_point, text::human_bytes(used), text::human_bytes(*mem.available_bytes),
            kind.empty() ? "the disk" : kind));
      else
        f.notes.push_back(fmt::format(
            "{} holds {}, less than the {} memory can cache (MemAvailable): after the first "
            "epoch a dataset on it can be read from the page cache",
            fs.mount_point, text::human_bytes(used), text::human_bytes(*mem.available_bytes)));
    }
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(
        settings::not_applicable(entry, "storage", "no file system under the data paths"));
  return out;
}

std::vector<Finding> storage_trim(const AuditInput& in, const settings::ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = settings::check_data_paths(in.facts, in.data_paths);
  std::optional<std::optional<std::string>> periodic;  // looked for once, when needed
  for (const auto& d : settings::data_file_systems(in.root, in.facts, paths)) {
    if (!d.disk) continue;
    const auto* b = in.facts.storage.block_device(*d.disk);
    if (b == nullptr || !b->rotational || *b->rotational) continue;  // SSDs and NVMe only
    if (!periodic) periodic = storage_periodic_trim(in.root);
    const auto& fs = *d.fs;
    std::vector<Evidence> ev = {
        {"/proc/self/mountinfo",
         fmt::format("{} on {} ({})", fs.device, fs.mount_point, text::join(fs.options, ","))}};
    if (*periodic) ev.push_back({**periodic, "runs fstrim"});
    const bool ok = !fs.discard && periodic->has_value();
    Finding f = settings::judge(entry, "storage", ok ? "true" : "false", std::move(ev));
    if (fs.discard) {
      f.actual = fmt::format("{} mounted with discard", fs.mount_point);
      f.summary = fmt::format(
          "{} ({}) is mounted with discard: each delete waits for the device to trim the "
          "blocks, in the writes of checkpoints and caches; a weekly fstrim costs less",
          fs.mount_point, *d.disk);
      f.fix = settings::Fix{
          fmt::format("remove discard from {}'s options in /etc/fstab and enable a weekly "
                      "fstrim (systemctl enable --now fstrim.timer)",
                      fs.mount_point),
          false};
    } else if (!*periodic) {
      f.actual = fmt::format("{}: no discard, no periodic fstrim", fs.mount_point);
      f.summary = fmt::format(
          "nothing trims {} ({}): without discard or a periodic fstrim the SSD's free blocks "
          "are not known to it, and its writes slow as it fills",
          fs.mount_point, *d.disk);
      f.fix = settings::Fix{
          "systemctl enable --now fstrim.timer (or a weekly cron job: fstrim --all)", false};
    } else {
      f.actual = fmt::format("{}: periodic fstrim", fs.mount_point);
      f.summary = fmt::format("{} ({}) is trimmed by a periodic fstrim ({})", fs.mount_point,
                              *d.disk, **periodic);
    }
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(settings::not_applicable(
        entry, "storage", "no solid-state disk under the data paths' file systems"));
  return out;
}

}  // namespace dltune::audit
