#include "inventory/host_facts.hpp"

#include <cstdlib>
#include <ctime>

#include <fmt/core.h>
#include <sys/statvfs.h>

#include "core/json.hpp"
#include "inventory/capture_files.hpp"

namespace dltune::inventory {

std::map<std::string, std::string> environment_for(const host::Root& root) {
  std::map<std::string, std::string> env;
  if (root.live()) {
    for (const auto& name : Context::environment_names())
      if (const char* v = std::getenv(name.c_str())) env[name] = v;
    return env;
  }
  auto text = root.read(capture_files::kEnviron);
  if (!text || !*text) return env;
  auto j = Json::parse(**text, nullptr, false);
  if (!j.is_object()) return env;
  for (const auto& [k, v] : j.items())
    if (v.is_string()) env[k] = v.get<std::string>();
  return env;
}

namespace {

std::function<std::optional<FsUsage>(const std::string&)> fs_usage_for(const host::Root& root) {
  // On the live host, and in a tree that is this kernel's (a mount of the host's /): statvfs of
  // the mount point where it is on this machine.
  if (root.this_kernel()) {
    return [root](const std::string& mount_point) -> std::optional<FsUsage> {
      struct statvfs st {};
      if (::statvfs(root.outside(mount_point).c_str(), &st) != 0) return std::nullopt;
      return FsUsage{static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize,
                     static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize};
    };
  }
  Json recorded = Json::object();
  if (auto text = root.read(capture_files::kFsUsage); text && *text) {
    auto j = Json::parse(**text, nullptr, false);
    if (j.is_object()) recorded = std::move(j);
  }
  return [recorded](const std::string& mount_point) -> std::optional<FsUsage> {
    const auto it = recorded.find(mount_point);
    if (it == recorded.end() || !it->is_object()) return std::nullopt;
    FsUsage u;
    u.total_bytes = it->value("total_bytes", std::uint64_t{0});
    u.free_bytes = it->value("free_bytes", std::uint64_t{0});
    return u;
  };
}

}  // namespace

HostFacts collect(const host::Root& root, const CollectOptions& options) {
  Context ctx(root, environment_for(root));
  ctx.fs_usage = fs_usage_for(root);
  HostFacts f;
  f.root = root.base();
  f.collected_at = static_cast<std::int64_t>(std::time(nullptr));
  f.os = collect_os(ctx);
  f.cpu = collect_cpu(ctx);
  f.memory = collect_memory(ctx);
  if (options.gpus) f.gpu = collect_gpus(ctx, options.nvml_library);
  if (options.launch_only) {
    if (options.network) f.network = collect_network(ctx);
    f.problems = ctx.problems();
    return f;
  }
  f.storage = collect_storage(ctx);
  f.network = collect_network(ctx);
  f.python = collect_python(ctx);
  f.cuda = collect_cuda(ctx, f.python);
  f.problems = ctx.problems();
  return f;
}

Json to_json(const HostFacts& f) {
  Json j;
  j["schema"] = "dltune.env/1";
  j["dltune_version"] = DLTUNE_VERSION;
  j["root"] = f.root;
  j["collected_at"] = f.collected_at;
  j["os"] = to_json(f.os);
  j["cpu"] = to_json(f.cpu);
  j["memory"] = to_json(f.memory);
  j["storage"] = to_json(f.storage);
  j["network"] = to_json(f.network);
  j["gpu"] = to_json(f.gpu);
  j["python"] = to_json(f.python);
  j["cuda"] = to_json(f.cuda);
  Json problems = Json::array();
  for (const auto& p : f.problems)
    problems.push_back(Json{{"fact", p.fact}, {"path", p.path}, {"reason", p.reason}});
  j["problems"] = std::move(problems);
  return j;
}

std::string render_text(const HostFacts& f) {
  std::vector<text::Section> all;
  auto append = [&](std::vector<text::Section> s) {
    for (auto& x : s) all.push_back(std::move(x));
  };
  append(render_os(f.os));
  append(render_cpu(f.cpu));
  append(render_memory(f.memory));
  append(render_storage(f.storage));
  append(render_network(f.network));
  append(render_gpus(f.gpu));
  append(render_cuda(f.cuda));
  append(render_python(f.python));
  if (!f.problems.empty()) {
    text::Section s{"Unknown (could not be read)", {}};
    for (const auto& p : f.problems) s.add(p.fact, fmt::format("{}: {}", p.path, p.reason));
    all.push_back(std::move(s));
  }
  return text::render_sections(all);
}

}  // namespace dltune::inventory
