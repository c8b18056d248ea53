// The `top` view: a Model as lines of text (monitor/top_view.hpp).
#include "monitor/top_view.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "core/text.hpp"
#include "core/time_format.hpp"

namespace dltune::monitor {

using monitor::Model;
using monitor::ProcessModel;

const char* sort_name(TopSort s) {
  switch (s) {
    case TopSort::kCpu:
      return "cpu";
    case TopSort::kMemory:
      return "mem";
    case TopSort::kPid:
      return "pid";
    case TopSort::kRunQueue:
      return "runq";
    case TopSort::kIo:
      return "io";
    case TopSort::kTree:
      break;
  }
  return "tree";
}

namespace {

// compact_bytes, appended to `out`: the process rows format it for every row at every frame, with
// formats compiled once (FMT_COMPILE) rather than parsed at each call.
void append_compact_bytes(std::string& out, double bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  if (!(bytes > 0)) {
    out += '0';
    return;
  }
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  auto at = std::back_inserter(out);
  if (u == 0)
    fmt::format_to(at, FMT_COMPILE("{:.0f}"), bytes);
  else if (bytes < 10)
    fmt::format_to(at, FMT_COMPILE("{:.1f}{}"), bytes, kUnits[u]);
  else
    fmt::format_to(at, FMT_COMPILE("{:.0f}{}"), bytes, kUnits[u]);
}

}  // namespace

std::string compact_bytes(double bytes) {
  std::string out;
  append_compact_bytes(out, bytes);
  return out;
}

namespace {

// The ROLE column (6 wide): "main", "worker", a rank as "rank3" ("r1234" past rank 99), "" for
// other processes.
std::string role_text(const ProcessModel& p) {
  if (p.role == Role::kOther) return "";
  if ((p.role == Role::kRank || p.role == Role::kMain) && p.rank) {
    auto t = fmt::format(FMT_COMPILE("rank{}"), *p.rank);
    return t.size() <= 6 ? t : fmt::format(FMT_COMPILE("r{}"), *p.rank);
  }
  return role_name(p.role);
}

void append_rate(std::string& out, double per_second) {
  if (per_second >= 10000) {
    append_compact_bytes(out, per_second);
    out += "/s";
  } else if (per_second >= 10) {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.0f}/s"), per_second);
  } else {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.1f}/s"), per_second);
  }
}
std::string rate(double per_second) {
  std::string out;
  append_rate(out, per_second);
  return out;
}

// `piece` right-aligned in `width` columns (left-aligned with `left`), appended to `out`.
void append_aligned(std::string& out, std::string_view piece, std::size_t width,
                    bool left = false) {
  const std::size_t pad = piece.size() < width ? width - piece.size() : 0;
  if (!left) out.append(pad, ' ');
  out += piece;
  if (left) out.append(pad, ' ');
}

std::string pct(std::optional<double> v) {
  return v ? fmt::format(FMT_COMPILE("{:.1f}%"), *v) : std::string("-");
}

std::string pressure(const std::optional<monitor::PressureModel>& p) {
  if (!p) return "-";
  if (p->full_pct) return fmt::format(FMT_COMPILE("{:.1f}/{:.1f}%"), p->some_pct, *p->full_pct);
  return fmt::format(FMT_COMPILE("{:.1f}%"), p->some_pct);
}

struct ViewLines {
  std::vector<TopLine> out;
  int width;
  void add(std::string text, Style style = Style::kNormal, std::vector<Span> spans = {}) {
    if (static_cast<int>(text.size()) > width) text.resize(static_cast<std::size_t>(width));
    // Spans cut at the width, as the text is.
    std::vector<Span> kept;
    for (auto sp : spans) {
      if (sp.start >= static_cast<int>(text.size()) || sp.length <= 0) continue;
      sp.length = std::min(sp.length, static_cast<int>(text.size()) - sp.start);
      kept.push_back(sp);
    }
    TopLine line;
    line.text = std::move(text);
    line.style = style;
    line.spans = std::move(kept);
    out.push_back(std::move(line));
  }
};

// Appends `piece` to `text`, tinted.
void tinted(std::string& text, std::vector<Span>& spans, const std::string& piece, Tint tint) {
  Span sp;
  sp.start = static_cast<int>(text.size());
  sp.length = static_cast<int>(piece.size());
  sp.tint = tint;
  text += piece;
  spans.push_back(sp);
}

void cpu_lines(const Model& m, ViewLines& l, int max_rows) {
  const auto& c = m.cpu;
  {
    std::string t = "CPU  ";
    std::vector<Span> sp;
    tinted(t, sp, fmt::format(FMT_COMPILE("usr {:.1f}%"), c.user_pct), Tint::kUser);
    t += ' ';
    tinted(t, sp, fmt::format(FMT_COMPILE("sys {:.1f}%"), c.system_pct), Tint::kSystem);
    t += ' ';
    tinted(t, sp, fmt::format(FMT_COMPILE("wait {:.1f}%"), c.iowait_pct), Tint::kIowait);
    t += ' ';
    tinted(t, sp, fmt::format(FMT_COMPILE("steal {:.1f}%"), c.steal_pct), Tint::kSteal);
    t += fmt::format(FMT_COMPILE(" idle {:.1f}%  run {} blk {}  ctxsw {}"), c.idle_pct,
                     m.procs_running, m.procs_blocked, rate(m.context_switches_s));
    l.add(std::move(t), Style::kNormal, std::move(sp));
  }
  if (m.cpus.empty()) return;
  // Too many CPUs for bars in the rows this height allows: one character per CPU, its busy
  // tenth ('.' idle, '0'..'9', '#' full), so that 128 CPUs still fit two rows of 80 columns.
  if (static_cast<int>(m.cpus.size()) > max_rows * std::max(1, l.width / 24)) {
    const int per_row = std::max(8, l.width - 12);
    for (std::size_t i = 0; i < m.cpus.size(); i += static_cast<std::size_t>(per_row)) {
      std::string row = fmt::format(FMT_COMPILE("cpu{:<4}{:<5}"), m.cpus[i].cpu, "");
      row.resize(12, ' ');
      for (std::size_t j = i; j < m.cpus.size() && j < i + static_cast<std::size_t>(per_row); ++j) {
        const double busy = std::clamp(m.cpus[j].busy_pct(), 0.0, 100.0);
        row += busy < 5 ? '.' : busy >= 95 ? '#' : static_cast<char>('0' + int(busy / 10));
      }
      l.add(row);
    }
    return;
  }
  // Cells of "cpuNN [|||||     45%] ": as many per row as fit, at least 12 columns of bar.
  const int per_row = std::max(1, std::min<int>(static_cast<int>(m.cpus.size()), l.width / 24));
  const int cell = l.width / per_row;
  const int bar = std::max(4, cell - 15);
  std::string row;
  std::vector<Span> spans;
  int in_row = 0;
  for (const auto& cpu : m.cpus) {
    const double busy = std::clamp(cpu.busy_pct(), 0.0, 100.0);
    const int user = static_cast<int>(std::lround(cpu.user_pct / 100.0 * bar));
    const int total = std::max(user, static_cast<int>(std::lround(busy / 100.0 * bar)));
    std::string b(static_cast<std::size_t>(bar), ' ');
    for (int i = 0; i < std::min(total, bar); ++i)
      b[static_cast<std::size_t>(i)] = i < user ? '|' : '+';
    auto text = fmt::format(FMT_COMPILE("cpu{:<3}[{}{:>4.0f}%]"), cpu.cpu, b, busy);
    text.resize(static_cast<std::size_t>(cell), ' ');
    // The bar's cells by mode: user, then system, iowait and steal in their shares of the rest.
    const int at = static_cast<int>(row.size()) + 7;
    const int rest = std::min(total, bar) - std::min(user, bar);
    const double other = cpu.system_pct + cpu.iowait_pct + cpu.steal_pct;
    int sys = rest, wait = 0;
    if (other > 0 && rest > 0) {
      sys = static_cast<int>(std::lround(rest * cpu.system_pct / other));
      wait = std::min(rest - sys, static_cast<int>(std::lround(rest * cpu.iowait_pct / other)));
    }
    int pos = at;
    const auto span = [&](int n, Tint t) {
      if (n <= 0) return;
      Span sp;
      sp.start = pos;
      sp.length = n;
      sp.tint = t;
      spans.push_back(sp);
      pos += n;
    };
    span(std::min(user, bar), Tint::kUser);
    span(sys, Tint::kSystem);
    span(wait, Tint::kIowait);
    span(rest - sys - wait, Tint::kSteal);
    row += text;
    if (++in_row == per_row) {
      l.add(row, Style::kNormal, std::move(spans));
      row.clear();
      spans.clear();
      in_row = 0;
    }
  }
  if (!row.empty()) l.add(row, Style::kNormal, std::move(spans));
}

void memory_lines(const Model& m, ViewLines& l) {
  const auto& mem = m.memory;
  {
    std::string t = "MEM  ";
    std::vector<Span> sp;
    tinted(
        t, sp,
        fmt::format(FMT_COMPILE("used {}/{}"), compact_bytes(mem.used), compact_bytes(mem.total)),
        Tint::kUsed);
    t += fmt::format(FMT_COMPILE("  avail {}  "), compact_bytes(mem.available));
    tinted(t, sp, fmt::format(FMT_COMPILE("cache {}"), compact_bytes(mem.cache)), Tint::kCache);
    t += fmt::format(FMT_COMPILE("  dirty {}"), compact_bytes(mem.dirty));
    l.add(std::move(t), Style::kNormal, std::move(sp));
  }
  {
    std::string t = "SWAP ";
    std::vector<Span> sp;
    // Swap in use in red; none (or no swap at all) plain.
    const auto used = fmt::format(FMT_COMPILE("used {}/{}"), compact_bytes(mem.swap_used),
                                  compact_bytes(mem.swap_total));
    if (mem.swap_used > 0)
      tinted(t, sp, used, Tint::kSwap);
    else
      t += used;
    t += fmt::format(FMT_COMPILE("  in {}B/s out {}B/s  majflt {}  minflt {}  refault {}"),
                     compact_bytes(mem.swap_in_bytes_s), compact_bytes(mem.swap_out_bytes_s),
                     rate(mem.major_faults_s), rate(mem.minor_faults_s), rate(mem.refault_file_s));
    l.add(std::move(t), mem.swap_in_bytes_s > 0 ? Style::kWarn : Style::kNormal, std::move(sp));
  }
  {
    std::string t = "PSI  some/full  ";
    std::vector<Span> sp;
    const auto part = [&](const char* name, const std::optional<PressureModel>& p) {
      t += name;
      if (p)
        tinted(t, sp, pressure(p), pressure_tint(p->some_pct));
      else
        t += pressure(p);
    };
    part("cpu ", m.pressure.cpu);
    part("  mem ", m.pressure.memory);
    part("  io ", m.pressure.io);
    t += "   (host)";
    l.add(std::move(t), Style::kNormal, std::move(sp));
  }
}

void device_lines(const Model& m, ViewLines& l) {
  constexpr std::size_t kMax = 3;  // more would crowd out the processes on 24 lines
  for (std::size_t i = 0; i < m.disks.size() && i < kMax; ++i) {
    const auto& d = m.disks[i];
    l.add(
        fmt::format(FMT_COMPILE("DISK {:<8} read {}B/s write {}B/s  util {:.0f}%  await {:.1f}ms  "
                                "queue {}"),
                    d.name, compact_bytes(d.read_bytes_s), compact_bytes(d.write_bytes_s),
                    d.util_pct, d.await_ms, d.in_flight));
  }
  if (m.disks.size() > kMax)
    l.add(fmt::format(FMT_COMPILE("DISK +{} more"), m.disks.size() - kMax));
  for (std::size_t i = 0; i < m.net.size() && i < kMax; ++i) {
    const auto& n = m.net[i];
    l.add(fmt::format(FMT_COMPILE("NET  {:<8} rx {}B/s tx {}B/s  errors {}  drops {}"), n.name,
                      compact_bytes(n.rx_bytes_s), compact_bytes(n.tx_bytes_s), rate(n.errors_s),
                      rate(n.dropped_s)));
  }
  if (m.net.size() > kMax) l.add(fmt::format(FMT_COMPILE("NET  +{} more"), m.net.size() - kMax));
}

// Clocks held down by power or heat (NVML's SwPowerCap, HwSlowdown, SwThermalSlowdown,
// HwThermalSlowdown, HwPowerBrakeSlowdown), not by idleness or an application's setting.
bool gpu_throttled(const GpuModel& g) {
  return g.clock_event_reasons && (*g.clock_event_reasons & 0xECu) != 0;
}
// At or past 85 C, where data-centre GPUs begin to slow down.
bool gpu_hot(const GpuModel& g) {
  return g.temperature_celsius && *g.temperature_celsius >= 85;
}

void gpu_lines(const Model& m, ViewLines& l, bool compact) {
  if (compact && m.gpus.size() > 2) {
    // One column per GPU, so that eight fit 80 columns in three rows.
    std::string util = "GPU  util%  ", mem = "GPU  mem%   ", power = "GPU  W/C    ";
    for (const auto& g : m.gpus) {
      util += g.utilization_gpu_pct ? fmt::format(FMT_COMPILE("{:>8.0f}"), *g.utilization_gpu_pct)
                                    : "       -";
      const bool has_mem = g.memory_used_bytes && g.memory_total_bytes && *g.memory_total_bytes;
      mem += has_mem ? fmt::format(FMT_COMPILE("{:>8.0f}"), 100.0 * double(*g.memory_used_bytes) /
                                                                double(*g.memory_total_bytes))
                     : "       -";
      power += fmt::format(
          "{:>8}",
          fmt::format(FMT_COMPILE("{}/{}"),
                      g.power_watts ? fmt::format(FMT_COMPILE("{:.0f}"), *g.power_watts) : "-",
                      g.temperature_celsius ? fmt::format(FMT_COMPILE("{}"), *g.temperature_celsius)
                                            : "-"));
    }
    l.add(util);
    l.add(mem);
    // A throttled or hot GPU's W/C cell in red.
    std::vector<Span> sp;
    for (std::size_t i = 0; i < m.gpus.size(); ++i)
      if (gpu_throttled(m.gpus[i]) || gpu_hot(m.gpus[i])) {
        Span x;
        x.start = 12 + static_cast<int>(i) * 8;
        x.length = 8;
        x.tint = Tint::kBad;
        sp.push_back(x);
      }
    l.add(power, Style::kNormal, std::move(sp));
    return;
  }
  for (const auto& g : m.gpus) {
    std::string s = fmt::format(FMT_COMPILE("GPU{} "), g.index);
    if (g.name) s += fmt::format(FMT_COMPILE("{} "), *g.name);
    s += fmt::format(FMT_COMPILE("util {}"), pct(g.utilization_gpu_pct));
    // NVML GPM's SM activity (Hopper and newer): how much of the GPU the kernels use.
    if (g.sm_active_pct) s += fmt::format(FMT_COMPILE(" sm {}"), pct(g.sm_active_pct));
    s += fmt::format(FMT_COMPILE("  mem {}/{}"),
                     g.memory_used_bytes ? compact_bytes(double(*g.memory_used_bytes)) : "-",
                     g.memory_total_bytes ? compact_bytes(double(*g.memory_total_bytes)) : "-");
    if (g.power_watts) s += fmt::format(FMT_COMPILE("  {:.0f}W"), *g.power_watts);
    if (g.temperature_celsius) s += fmt::format(FMT_COMPILE("  {}C"), *g.temperature_celsius);
    if (g.sm_clock_mhz) s += fmt::format(FMT_COMPILE("  {}MHz"), *g.sm_clock_mhz);
    if (g.pcie_tx_bytes_s && g.pcie_rx_bytes_s)
      s += fmt::format(FMT_COMPILE("  pcie tx {}B/s rx {}B/s"), compact_bytes(*g.pcie_tx_bytes_s),
                       compact_bytes(*g.pcie_rx_bytes_s));
    if (!g.processes.empty()) s += fmt::format(FMT_COMPILE("  procs {}"), g.processes.size());
    std::vector<Span> sp;
    if (gpu_throttled(g)) tinted(s, sp, "  THROTTLED", Tint::kBad);
    if (gpu_hot(g)) tinted(s, sp, "  HOT", Tint::kBad);
    l.add(s, Style::kNormal, std::move(sp));
  }
}

void cgroup_lines(const Model& m, ViewLines& l) {
  if (!m.cgroup) return;
  const auto& c = *m.cgroup;
  std::string s = fmt::format(FMT_COMPILE("JOB  {} ({})  cpu {}{}"), c.path, c.version,
                              pct(c.cpu_pct), c.cpu_from_processes ? " (its processes')" : "");
  if (c.cpu_quota_cpus) s += fmt::format(FMT_COMPILE(" quota {:.2f}"), *c.cpu_quota_cpus);
  s += fmt::format(FMT_COMPILE("  throttled {}"), pct(c.throttled_pct));
  l.add(s, c.throttled_pct && *c.throttled_pct > 10 ? Style::kWarn : Style::kNormal);
  std::string mem = "JOB  mem ";
  mem += c.memory_bytes ? compact_bytes(double(*c.memory_bytes)) : "-";
  mem += c.memory_limit_bytes
             ? fmt::format(FMT_COMPILE("/{}"), compact_bytes(double(*c.memory_limit_bytes)))
             : std::string("/unlimited");
  if (c.memory_limit_pct) mem += fmt::format(FMT_COMPILE(" ({:.0f}%)"), *c.memory_limit_pct);
  if (c.failcnt_delta) mem += fmt::format(FMT_COMPILE("  limit hits {}"), *c.failcnt_delta);
  if (c.oom_kills_delta) mem += fmt::format(FMT_COMPILE("  oom kills {}"), *c.oom_kills_delta);
  mem += fmt::format(FMT_COMPILE("  psi cpu {} mem {} io {}"), pressure(c.pressure.cpu),
                     pressure(c.pressure.memory), pressure(c.pressure.io));
  const bool warn = (c.oom_kills_delta && *c.oom_kills_delta > 0) ||
                    (c.memory_limit_pct && *c.memory_limit_pct > 90);
  l.add(mem, warn ? Style::kWarn : Style::kNormal);
}

// A command line and, after it, the Python function its process is in, within `room` columns:
// the program by its name alone ("python3", not "/usr/bin/python3"), then the command cut (to
// no less than 16 columns) so that both show.
std::string with_python_frame(std::string cmd, const std::string& frame, int room) {
  if (frame.empty()) return cmd;
  if (const auto space = cmd.find(' '); cmd.rfind('/', space) != std::string::npos)
    cmd.erase(0, cmd.rfind('/', space) + 1);
  const std::string tail = " | py " + frame;
  const auto r = static_cast<std::size_t>(std::max(room, 0));
  if (cmd.size() + tail.size() > r) {
    const std::size_t keep = std::max<std::size_t>(r > tail.size() ? r - tail.size() : 0, 16);
    if (keep + 2 < cmd.size()) cmd = cmd.substr(0, keep - 2) + "..";
  }
  return cmd + tail;
}

double io_of(const ProcessModel& p) {
  return p.read_bytes_s.value_or(0) + p.write_bytes_s.value_or(0);
}

}  // namespace

// Whether any GPU lists its processes (NVML's compute processes): only then has top a GPU column.
static bool lists_gpu_processes(const Model& model) {
  return std::any_of(model.gpus.begin(), model.gpus.end(),
                     [](const GpuModel& g) { return !g.processes.empty(); });
}

// The GPU column of a process (8 wide): its GPU and the memory it holds there ("0 1.2G"), its
// GPUs and their sum ("0,1 2.4G", "0-7 80G" for a run of them), "-" when it uses none.
static std::string gpu_column(const Model& model, pid_t pid) {
  std::vector<unsigned> used;
  std::uint64_t bytes = 0;
  bool known = false;
  for (const auto& g : model.gpus)
    for (const auto& gp : g.processes)
      if (gp.pid == pid) {
        used.push_back(g.index);
        if (gp.used_memory_bytes) {
          bytes += *gp.used_memory_bytes;
          known = true;
        }
      }
  if (used.empty()) return "-";
  std::string which;
  const bool run = used.size() > 2 && used.back() - used.front() + 1 == used.size();
  if (run)
    which = fmt::format(FMT_COMPILE("{}-{}"), used.front(), used.back());
  else
    for (std::size_t i = 0; i < used.size(); ++i) which += (i ? "," : "") + std::to_string(used[i]);
  return known ? fmt::format(FMT_COMPILE("{} {}"), which, compact_bytes(double(bytes))) : which;
}

bool matches_filter(const ProcessModel& p, std::string_view filter) {
  if (filter.empty()) return true;
  if (!p.cmdline.empty()) return p.cmdline.find(filter) != std::string::npos;
  return fmt::format(FMT_COMPILE("[{}]"), p.comm).find(filter) != std::string::npos;
}

Tint pressure_tint(double some_pct) {
  return some_pct < 5 ? Tint::kGood : some_pct < 20 ? Tint::kFair : Tint::kBad;
}

bool is_kernel_thread(const ProcessModel& p) {
  return p.pid == 2 || p.ppid == 2;
}

std::vector<const ProcessModel*> visible_processes(const Model& model, TopSort sort,
                                                   std::string_view filter,
                                                   std::optional<pid_t> follow,
                                                   bool hide_kernel_threads) {
  auto out = ordered_processes(model, sort);
  if (hide_kernel_threads)
    std::erase_if(out, [](const ProcessModel* p) { return is_kernel_thread(*p); });
  if (!filter.empty())
    std::erase_if(out, [filter](const ProcessModel* p) { return !matches_filter(*p, filter); });
  if (follow) {
    // The followed process and every process whose chain of parents reaches it.
    std::map<pid_t, pid_t> parent;
    for (const auto& p : model.processes) parent.emplace(p.pid, p.ppid);
    const pid_t root = *follow;
    const auto under = [&parent, root](pid_t pid) {
      for (std::size_t hops = 0; hops <= parent.size(); ++hops) {
        if (pid == root) return true;
        auto it = parent.find(pid);
        if (it == parent.end() || it->second == pid) return false;
        pid = it->second;
      }
      return false;
    };
    std::erase_if(out, [&under](const ProcessModel* p) { return !under(p->pid); });
  }
  return out;
}

ProcessDetail detail_for_view(const std::vector<const ProcessModel*>& visible,
                              const TopLayout& layout, TopSort sort, const Model& model,
                              unsigned others_every) {
  ProcessDetail d;
  d.switches_of_main_and_ranks_only = true;
  if (sort == TopSort::kRunQueue || sort == TopSort::kIo) return d;  // all: the sort needs them
  const std::size_t page = std::max<std::size_t>(layout.rows, 1);
  const std::size_t from = layout.first > page ? layout.first - page : 0;
  const std::size_t to = std::min(visible.size(), layout.first + 2 * page);
  const std::size_t shown_from = std::min(layout.first, visible.size());
  const std::size_t shown_to = std::min(visible.size(), layout.first + page);
  std::vector<pid_t> pids, shown;
  pids.reserve(to - std::min(from, to) + 8);
  shown.reserve(shown_to - shown_from + 8);
  for (std::size_t i = from; i < to; ++i) pids.push_back(visible[i]->pid);
  for (std::size_t i = shown_from; i < shown_to; ++i) shown.push_back(visible[i]->pid);
  for (const auto& p : model.processes)
    if (p.role == Role::kMain || p.role == Role::kRank) {
      pids.push_back(p.pid);
      shown.push_back(p.pid);
    }
  d.pids = std::move(pids);
  if (others_every > 1) {
    d.every_sample = std::move(shown);
    d.others_every = others_every;
  }
  return d;
}

bool reads_io(const Model& model) {
  return std::any_of(model.processes.begin(), model.processes.end(),
                     [](const ProcessModel& p) { return p.read_bytes_s.has_value(); });
}

std::vector<const ProcessModel*> ordered_processes(const Model& model, TopSort sort) {
  std::vector<const ProcessModel*> out;
  out.reserve(model.processes.size());
  if (sort != TopSort::kTree) {
    for (const auto& p : model.processes) out.push_back(&p);
    const auto key = [sort](const ProcessModel* p) -> double {
      switch (sort) {
        case TopSort::kCpu:
          return p->cpu_pct;
        case TopSort::kMemory:
          return static_cast<double>(p->rss_bytes);
        case TopSort::kRunQueue:
          return p->run_queue_pct.value_or(0);
        case TopSort::kIo:
          return io_of(*p);
        default:
          return -static_cast<double>(p->pid);
      }
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const auto* a, const auto* b) { return key(a) > key(b); });
    return out;
  }
  // The tree: roots are those whose parent is not shown (the main process first), each
  // followed by its children, depth first, by pid.
  std::map<pid_t, std::vector<const ProcessModel*>> children;
  std::map<pid_t, const ProcessModel*> by_pid;
  for (const auto& p : model.processes) by_pid.emplace(p.pid, &p);
  std::vector<const ProcessModel*> roots;
  for (const auto& p : model.processes) {
    if (p.pid != p.ppid && by_pid.contains(p.ppid))
      children[p.ppid].push_back(&p);
    else
      roots.push_back(&p);
  }
  std::stable_sort(roots.begin(), roots.end(), [](const auto* a, const auto* b) {
    return (a->role == monitor::Role::kMain) > (b->role == monitor::Role::kMain);
  });
  std::vector<const ProcessModel*> stack(roots.rbegin(), roots.rend());
  while (!stack.empty() && out.size() < model.processes.size()) {
    const auto* p = stack.back();
    stack.pop_back();
    out.push_back(p);
    if (auto it = children.find(p->pid); it != children.end())
      for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back(*c);
  }
  return out;
}

std::vector<TopLine> top_view(const Model& model, const TopOptions& options, TopLayout* layout) {
  ViewLines l{{}, std::max(40, options.width)};
  std::string when = "--:--:--";
  if (model.wall_ns > 0)
    if (auto t = text::format_time_ns(model.wall_ns, "%H:%M:%S", text::TimeZone::kLocal);
        !t.empty())
      when = std::move(t);
  // The filter and the followed process first: they change what the list means, and the
  // title's end is cut on a narrow terminal.
  std::string scope;
  if (!options.filter.empty()) scope += fmt::format(FMT_COMPILE("filter \"{}\"  "), options.filter);
  if (options.follow) scope += fmt::format(FMT_COMPILE("follow {}  "), *options.follow);
  l.add(fmt::format(FMT_COMPILE("dltune top  {}{}  {}  every {:.1f}s  sort {}"), scope,
                    options.title, when, model.interval_s, sort_name(options.sort)),
        Style::kTitle);
  // A notice is read whole: wrapped, never cut at the width.
  for (const auto& n : options.notices) {
    const std::string wrapped =
        text::wrap("! " + n, 2, static_cast<std::size_t>(std::max(40, options.width)));
    for (const auto line : text::lines(wrapped)) l.add(std::string(line), Style::kWarn);
  }
  const bool limited = options.height > 0;
  cpu_lines(model, l, limited ? std::max(1, options.height / 8) : 1 << 20);
  memory_lines(model, l);
  device_lines(model, l);
  gpu_lines(model, l, limited && options.height < 40);
  cgroup_lines(model, l);
  // The history only where it leaves the process list room (at least 5 rows below it, with the
  // list's header and the status line): on a short terminal the processes come first.
  const int after_history = options.height - static_cast<int>(l.out.size()) -
                            static_cast<int>(options.history.size()) - 2;
  if (!limited || after_history >= 5)
    for (const auto& h : options.history) {
      TopLine line;
      line.text = h;
      l.out.push_back(std::move(line));
    }
  if (options.straggler) {
    const std::string wrapped = text::wrap("! " + options.straggler->text, 2,
                                           static_cast<std::size_t>(std::max(40, options.width)));
    for (const auto line : text::lines(wrapped)) l.add(std::string(line), Style::kWarn);
  }

  const bool io = reads_io(model);
  const bool gpu = lists_gpu_processes(model);
  l.add(fmt::format(FMT_COMPILE("{:>7} {:<6} S {:>6} {:>5} {:>5} {:>6} {:>7} {}{}{:>4} {}"), "PID",
                    "ROLE", "CPU%", "SYS%", "RUNQ%", "RSS", "MAJF/s",
                    io ? fmt::format(FMT_COMPILE("{:>7} "), "IO/s") : "",
                    gpu ? fmt::format(FMT_COMPILE("{:<8} "), "GPU MEM") : "", "THR", "COMMAND"),
        Style::kHeader);
  std::vector<const ProcessModel*> own;
  if (options.visible == nullptr)
    own = visible_processes(model, options.sort, options.filter, options.follow);
  const auto& procs = options.visible != nullptr ? *options.visible : own;
  // Rows left: the height less what is above, less the status line.
  std::size_t room = procs.size();
  if (options.height > 0) {
    const int used = static_cast<int>(l.out.size()) + (options.status.empty() ? 0 : 1);
    room = static_cast<std::size_t>(std::max(0, options.height - used));
  }
  // The live view scrolls: from `first`, moved so that the selected row is on screen.
  std::size_t first = 0;
  std::optional<std::size_t> selected;
  if (options.selected && !procs.empty()) {
    selected = std::min(*options.selected, procs.size() - 1);
    first = std::min(options.first, procs.size() - 1);
    if (*selected < first) first = *selected;
    if (room > 0 && *selected >= first + room) first = *selected - room + 1;
    // No empty rows below the last process while earlier ones are hidden.
    if (room > 0 && procs.size() >= room) first = std::min(first, procs.size() - room);
  }
  if (layout != nullptr) {
    layout->count = procs.size();
    layout->first = first;
    layout->rows = room;
  }
  std::map<pid_t, int> depth;
  // The tree's indent from every row above, shown or not.
  if (options.sort == TopSort::kTree)
    for (std::size_t i = 0; i < first; ++i) {
      const auto& p = *procs[i];
      int d = 0;
      if (auto it = depth.find(p.ppid); it != depth.end()) d = std::min(it->second + 1, 4);
      depth[p.pid] = d;
    }
  std::string piece;  // a column's text before it is aligned, reused from row to row
  for (std::size_t i = first; i < procs.size() && i < first + room; ++i) {
    const auto& p = *procs[i];
    int d = 0;
    if (options.sort == TopSort::kTree)
      if (auto it = depth.find(p.ppid); it != depth.end()) d = std::min(it->second + 1, 4);
    depth[p.pid] = d;
    const bool straggler = options.straggler && options.straggler->pid == p.pid;
    const Style style = selected && *selected == i ? Style::kSelected
                        : straggler                ? Style::kWarn
                        : p.role == monitor::Role::kMain || p.role == monitor::Role::kRank
                            ? Style::kMain
                        : p.role == monitor::Role::kWorker ? Style::kWorker
                                                           : Style::kNormal;
    // "    PID ROLE   S   CPU%  SYS% RUNQ%    RSS  MAJF/s[    IO/s][ GPU MEM] THR COMMAND", in
    // one string with compiled formats: this runs for every row at every frame.
    std::string row;
    row.reserve(static_cast<std::size_t>(l.width) + 16);
    const auto at = std::back_inserter(row);
    fmt::format_to(at, FMT_COMPILE("{:>7} "), p.pid);
    append_aligned(row, role_text(p), 6, true);
    fmt::format_to(at, FMT_COMPILE(" {} "), p.state);
    if (p.has_rates) {
      fmt::format_to(at, FMT_COMPILE("{:>6.1f} {:>5.1f} "), p.cpu_pct, p.system_pct);
      if (p.run_queue_pct)
        fmt::format_to(at, FMT_COMPILE("{:>5.1f}"), *p.run_queue_pct);
      else
        row += "    -";
    } else {
      row += "     -     -     -";
    }
    row += ' ';
    piece.clear();
    append_compact_bytes(piece, double(p.rss_bytes));
    append_aligned(row, piece, 6);
    row += ' ';
    piece.clear();
    if (p.has_rates)
      append_rate(piece, p.major_faults_s);
    else
      piece = "-";
    append_aligned(row, piece, 7);
    if (io) {
      row += ' ';
      piece.clear();
      if (p.has_rates && p.read_bytes_s)
        append_compact_bytes(piece, io_of(p));
      else
        piece = "-";
      append_aligned(row, piece, 7);
    }
    if (gpu) {
      row += ' ';
      append_aligned(row, gpu_column(model, p.pid), 8, true);
    }
    fmt::format_to(at, FMT_COMPILE(" {:>4} "), p.threads);
    row.append(static_cast<std::size_t>(d) * 2, ' ');
    if (straggler) row += "STRAGGLER ";
    // The command line (its name in brackets when it has none, a kernel thread), as much as
    // fits (ViewLines::add cuts at the width). One may hold newlines and tabs (python3 -c "..."):
    // one row each, as spaces.
    const std::size_t cmd_at = row.size();
    const std::size_t room_left =
        static_cast<std::size_t>(std::max(0, l.width - static_cast<int>(cmd_at)));
    const auto blank_controls = [](std::string& t, std::size_t from) {
      for (std::size_t k = from; k < t.size(); ++k)
        if (static_cast<unsigned char>(t[k]) < 0x20 || t[k] == 0x7f) t[k] = ' ';
    };
    if (!p.python_frame.empty()) {
      std::string cmd = p.cmdline.empty() ? "[" + p.comm + "]" : p.cmdline;
      blank_controls(cmd, 0);
      row += with_python_frame(std::move(cmd), p.python_frame, static_cast<int>(room_left));
    } else if (p.cmdline.empty()) {
      row += '[';
      row += p.comm;
      row += ']';
    } else {
      row.append(p.cmdline, 0, room_left);
    }
    blank_controls(row, cmd_at);
    l.add(std::move(row), style);
  }
  if (!options.selected && procs.size() > room && room > 0) {
    TopLine more;
    more.text = fmt::format(FMT_COMPILE("  ... {} more processes"), procs.size() - room + 1);
    l.out.back() = std::move(more);
  }
  if (options.height > 0 && static_cast<int>(l.out.size()) > options.height - 1)
    l.out.resize(static_cast<std::size_t>(std::max(1, options.height - 1)));
  if (!options.status.empty()) l.add(options.status, Style::kHeader);
  return l.out;
}

}  // namespace dltune::monitor
