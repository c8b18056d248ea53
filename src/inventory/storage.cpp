#include "inventory/storage.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "inventory/json.hpp"
#include "inventory/mounts.hpp"

namespace dltune::inventory {

bool is_data_fstype(const std::string& t) {
  static const char* kKernelState[] = {"proc",
                                       "sysfs",
                                       "cgroup",
                                       "cgroup2",
                                       "devpts",
                                       "mqueue",
                                       "debugfs",
                                       "tracefs",
                                       "securityfs",
                                       "pstore",
                                       "bpf",
                                       "configfs",
                                       "fusectl",
                                       "hugetlbfs",
                                       "binfmt_misc",
                                       "autofs",
                                       "rpc_pipefs",
                                       "nsfs",
                                       "efivarfs",
                                       "selinuxfs",
                                       "devtmpfs",
                                       "ramfs",
                                       "fuse.gvfsd-fuse",
                                       "fuse.portal",
                                       "nfsd"};
  for (const char* k : kKernelState)
    if (t == k) return false;
  return !t.empty();
}

namespace {

bool has(const std::vector<std::string>& v, const char* x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void collect_file_systems(Context& ctx, StorageFacts& f) {
  for (const auto& m : host_mounts(ctx)) {
    if (!is_data_fstype(m.fstype)) continue;
    // tmpfs is kept only where it matters for training (/dev/shm and any data-looking mount).
    if (m.fstype == "tmpfs" && (m.mount_point.starts_with("/run") ||
                                m.mount_point.starts_with("/sys") || m.mount_point == "/dev"))
      continue;
    FileSystem fs;
    fs.mount_point = m.mount_point;
    fs.device = m.source;
    fs.fstype = m.fstype;
    fs.options = m.options;
    for (const auto& o : m.super_options)
      if (!has(fs.options, o.c_str())) fs.options.push_back(o);
    fs.noatime = has(fs.options, "noatime");
    fs.discard = has(fs.options, "discard");
    if (ctx.fs_usage) {
      if (auto u = ctx.fs_usage(m.mount_point)) {
        fs.total_bytes = u->total_bytes;
        fs.free_bytes = u->free_bytes;
      }
    }
    // A later mount on the same point hides the earlier one.
    std::erase_if(f.file_systems,
                  [&](const FileSystem& x) { return x.mount_point == fs.mount_point; });
    f.file_systems.push_back(std::move(fs));
  }
}

void collect_block_devices(Context& ctx, StorageFacts& f) {
  for (const auto& name : ctx.list("storage.block", "/sys/block")) {
    // Loop, RAM and device-mapper-less zero-size devices are not storage a job reads.
    if (name.starts_with("loop") || name.starts_with("ram") || name.starts_with("zram")) continue;
    const std::string dir = "/sys/block/" + name;
    BlockDevice d;
    d.name = name;
    d.nvme = name.starts_with("nvme");
    if (auto v = ctx.read_value("storage.block", dir + "/queue/rotational")) {
      if (*v == "0" || *v == "1") d.rotational = *v == "1";
    }
    if (auto v = ctx.read_value("storage.block", dir + "/queue/scheduler"))
      d.scheduler = host::parse::bracket_choice(*v).selected;
    if (auto v = ctx.read_value("storage.block", dir + "/queue/read_ahead_kb"))
      d.read_ahead_kb = text::to_uint(*v);
    if (auto v = ctx.read_value("storage.block", dir + "/size")) {
      if (auto sectors = text::to_uint(*v)) d.size_bytes = *sectors * 512;  // always 512-byte units
    }
    d.model = ctx.read_value("storage.block", dir + "/device/model");
    if (d.model && d.model->empty()) d.model.reset();
    if (d.size_bytes && *d.size_bytes == 0) continue;
    f.block_devices.push_back(std::move(d));
  }
}

}  // namespace

const BlockDevice* StorageFacts::block_device(std::string_view name) const {
  for (const auto& b : block_devices)
    if (b.name == name) return &b;
  return nullptr;
}

bool is_virtual_disk(std::string_view name) {
  return name.starts_with("vd") || name.starts_with("xvd");
}

StorageFacts collect_storage(Context& ctx) {
  StorageFacts f;
  collect_file_systems(ctx, f);
  collect_block_devices(ctx, f);
  return f;
}

Json to_json(const StorageFacts& f) {
  Json j = Json::object();
  Json fss = Json::array();
  for (const auto& fs : f.file_systems) {
    Json x;
    x["mount_point"] = fs.mount_point;
    x["device"] = fs.device;
    x["fstype"] = fs.fstype;
    x["options"] = fs.options;
    x["noatime"] = fs.noatime;
    x["discard"] = fs.discard;
    put(x, "total_bytes", fs.total_bytes);
    put(x, "free_bytes", fs.free_bytes);
    fss.push_back(std::move(x));
  }
  j["file_systems"] = std::move(fss);
  Json bds = Json::array();
  for (const auto& d : f.block_devices) {
    Json x;
    x["name"] = d.name;
    put(x, "rotational", d.rotational);
    x["nvme"] = d.nvme;
    put(x, "scheduler", d.scheduler);
    put(x, "read_ahead_kb", d.read_ahead_kb);
    put(x, "size_bytes", d.size_bytes);
    put(x, "model", d.model);
    bds.push_back(std::move(x));
  }
  j["block_devices"] = std::move(bds);
  return j;
}

std::vector<text::Section> render_storage(const StorageFacts& f) {
  text::Section s{"Storage", {}};
  for (const auto& fs : f.file_systems) {
    std::string v = fmt::format("{} on {}", fs.fstype, fs.device);
    if (fs.total_bytes && fs.free_bytes)
      v += fmt::format(", {} of {} free", text::human_bytes(*fs.free_bytes),
                       text::human_bytes(*fs.total_bytes));
    std::vector<std::string> flags;
    flags.push_back(fs.noatime ? "noatime" : "atime updates (no noatime)");
    if (fs.discard) flags.push_back("discard");
    v += fmt::format(" [{}]", fmt::join(flags, ", "));
    s.add(fs.mount_point, v);
  }
  for (const auto& d : f.block_devices) {
    std::string kind = d.nvme ? "NVMe" : d.rotational ? (*d.rotational ? "HDD" : "SSD") : "disk";
    std::string v = kind;
    if (d.size_bytes) v += ", " + text::human_bytes(*d.size_bytes);
    if (d.model) v += ", " + *d.model;
    if (d.scheduler) v += ", scheduler " + *d.scheduler;
    if (d.read_ahead_kb) v += fmt::format(", read-ahead {} KiB", *d.read_ahead_kb);
    s.add("/dev/" + d.name, v);
  }
  return {s};
}

}  // namespace dltune::inventory
