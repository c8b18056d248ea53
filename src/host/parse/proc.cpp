#include "host/parse/proc.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/scan.hpp"

namespace dltune::host::parse {

using text::fields;
using text::trim;

std::map<std::string, std::string> os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : text::lines(text)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;  // os-release(5): ignore bad lines
    out[std::string(trim(line.substr(0, eq)))] = text::unquote(line.substr(eq + 1));
  }
  return out;
}

Result<std::map<std::string, std::uint64_t>> meminfo(std::string_view text) {
  std::map<std::string, std::uint64_t> out;
  auto ok = parse_meminfo_lines(
      text, [&](std::string_view key, std::uint64_t value) { out[std::string(key)] = value; });
  if (!ok) return tl::unexpected(ok.error());
  return out;
}

Result<std::map<std::string, std::uint64_t>> vmstat(std::string_view text) {
  std::map<std::string, std::uint64_t> out;
  auto ok = parse_keyed(text, "/proc/vmstat", [&](std::string_view key, std::uint64_t value) {
    out[std::string(key)] = value;
  });
  if (!ok) return tl::unexpected(ok.error());
  return out;
}

std::vector<KernelParam> cmdline(std::string_view text) {
  std::vector<KernelParam> out;
  std::string cur;
  bool quoted = false;
  auto flush = [&] {
    if (cur.empty()) return;
    KernelParam p;
    const auto eq = cur.find('=');
    if (eq == std::string::npos) {
      p.key = cur;
    } else {
      p.key = cur.substr(0, eq);
      p.value = cur.substr(eq + 1);
    }
    out.push_back(std::move(p));
    cur.clear();
  };
  for (const char c : text) {
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && (c == ' ' || c == '\n' || c == '\t')) {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

std::optional<std::int64_t> boot_time(std::string_view proc_stat) {
  for (const auto line : text::lines(proc_stat)) {
    if (!line.starts_with("btime ")) continue;
    return text::to_int(line.substr(6));
  }
  return std::nullopt;
}

Result<std::map<std::string, Limit>> limits(std::string_view text) {
  // The kernel prints fixed columns: name (25 chars), soft (20), hard (20), units.
  std::map<std::string, Limit> out;
  int n = 0;
  for (const auto line : text::lines(text)) {
    ++n;
    if (n == 1 && line.starts_with("Limit")) continue;
    if (trim(line).empty()) continue;
    const auto f = fields(line);
    // Find the soft value: the first field that is a number or "unlimited" after the name.
    std::size_t i = 0;
    while (i < f.size() && f[i] != "unlimited" && !text::to_uint(f[i])) ++i;
    if (i == 0 || i + 1 >= f.size())
      return fail(fmt::format("line {}: expected 'Name  soft  hard  [units]', got", n),
                  std::string(line));
    std::string name;
    for (std::size_t k = 0; k < i; ++k) {
      if (k) name += ' ';
      name += f[k];
    }
    auto value = [](std::string_view s) -> std::optional<std::optional<std::uint64_t>> {
      if (s == "unlimited") return std::optional<std::uint64_t>();
      if (auto v = text::to_uint(s)) return std::optional<std::uint64_t>(*v);
      return std::nullopt;
    };
    const auto soft = value(f[i]);
    const auto hard = value(f[i + 1]);
    if (!soft || !hard)
      return fail(fmt::format("line {}: expected numbers or 'unlimited', got", n),
                  std::string(line));
    Limit l;
    l.soft = *soft;
    l.hard = *hard;
    if (i + 2 < f.size()) l.unit = std::string(f[i + 2]);
    out[name] = l;
  }
  return out;
}

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo (fs/proc_namespace.c).
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 &&
          std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> split_options(std::string_view s) {
  std::vector<std::string> out;
  for (const auto o : text::split(s, ','))
    if (!o.empty()) out.emplace_back(o);
  return out;
}

}  // namespace

Result<std::vector<Mount>> mountinfo(std::string_view text) {
  std::vector<Mount> out;
  int n = 0;
  for (const auto line : text::lines(text)) {
    ++n;
    if (trim(line).empty()) continue;
    const auto f = fields(line);
    // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
    const auto sep = std::find(f.begin(), f.end(), std::string_view("-"));
    if (f.size() < 7 || sep == f.end() || sep - f.begin() < 6 || f.end() - sep < 3)
      return fail(fmt::format("line {}: expected 'ID PARENT MAJ:MIN ROOT MOUNT OPTS ... - TYPE "
                              "SOURCE SUPEROPTS', got",
                              n),
                  std::string(line));
    Mount m;
    const auto id = text::to_int(f[0]);
    const auto parent = text::to_int(f[1]);
    if (!id || !parent)
      return fail(fmt::format("line {}: mount ids are not numbers:", n), std::string(line));
    m.id = static_cast<int>(*id);
    m.parent = static_cast<int>(*parent);
    m.major_minor = std::string(f[2]);
    m.root = unescape_octal(f[3]);
    m.mount_point = unescape_octal(f[4]);
    m.options = split_options(f[5]);
    m.fstype = std::string(sep[1]);
    m.source = unescape_octal(sep[2]);
    if (f.end() - sep >= 4) m.super_options = split_options(sep[3]);
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<Swap>> swaps(std::string_view text) {
  std::vector<Swap> out;
  int n = 0;
  for (const auto line : text::lines(text)) {
    ++n;
    if (n == 1 || trim(line).empty()) continue;  // header
    const auto f = fields(line);
    if (f.size() < 5)
      return fail(fmt::format("line {}: expected 'Filename Type Size Used Priority', got", n),
                  std::string(line));
    const auto size = text::to_uint(f[2]);
    const auto used = text::to_uint(f[3]);
    const auto prio = text::to_int(f[4]);
    if (!size || !used || !prio)
      return fail(fmt::format("line {}: sizes and priority must be numbers:", n),
                  std::string(line));
    out.push_back(Swap{unescape_octal(f[0]), std::string(f[1]), *size * 1024, *used * 1024,
                       static_cast<int>(*prio)});
  }
  return out;
}

Choice bracket_choice(std::string_view text) {
  Choice c;
  for (auto f : fields(trim(text))) {
    if (f.size() >= 2 && f.front() == '[' && f.back() == ']') {
      f = f.substr(1, f.size() - 2);
      c.selected = std::string(f);
    }
    c.options.emplace_back(f);
  }
  // A file holding a single plain value ("performance") is its own selection.
  if (!c.selected && c.options.size() == 1) c.selected = c.options[0];
  return c;
}

Result<std::vector<CgroupMembership>> proc_cgroup(std::string_view text) {
  std::vector<CgroupMembership> out;
  int n = 0;
  for (const auto line : text::lines(text)) {
    ++n;
    if (trim(line).empty()) continue;
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    const auto id = c1 == std::string_view::npos ? std::nullopt : text::to_int(line.substr(0, c1));
    if (c2 == std::string_view::npos || !id)
      return fail(fmt::format("line {}: expected 'ID:CONTROLLERS:PATH', got", n),
                  std::string(line));
    CgroupMembership m;
    m.hierarchy = static_cast<int>(*id);
    for (const auto c : text::split(line.substr(c1 + 1, c2 - c1 - 1), ','))
      if (!c.empty()) m.controllers.emplace_back(c);
    m.path = std::string(line.substr(c2 + 1));
    out.push_back(std::move(m));
  }
  return out;
}

CpuInfo cpuinfo(std::string_view text) {
  CpuInfo info;
  std::set<std::string> flags;
  for (const auto line : text::lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = trim(line.substr(0, colon));
    const auto value = trim(line.substr(colon + 1));
    if (key == "processor") {
      ++info.processors;
    } else if ((key == "model name" || key == "Model Name") && !info.model_name) {
      info.model_name = std::string(value);
    } else if ((key == "vendor_id" || key == "CPU implementer") && !info.vendor) {
      info.vendor = std::string(value);
    } else if (key == "flags" || key == "Features") {
      for (const auto f : fields(value)) flags.emplace(f);
    }
  }
  info.flags.assign(flags.begin(), flags.end());
  info.hypervisor = flags.count("hypervisor") > 0;
  return info;
}

}  // namespace dltune::host::parse
