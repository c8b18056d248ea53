#include "tui/top.hpp"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "monitor/scope.hpp"
#include "tui/py_functions.hpp"
#include "tui/screen.hpp"
#include "tui/sparkline.hpp"
#include "tui/top_keys.hpp"

namespace dltune::tui {

namespace {

std::vector<PaintedLine> painted(std::vector<monitor::TopLine> lines) {
  std::vector<PaintedLine> out;
  out.reserve(lines.size());
  for (auto& l : lines) {
    PaintedLine p;
    p.text = std::move(l.text);
    p.paint = static_cast<Paint>(l.style);
    for (const auto& s : l.spans) {
      InkSpan i;
      i.start = s.start;
      i.length = s.length;
      i.ink = static_cast<Ink>(s.tint);
      p.spans.push_back(i);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PaintedLine> help_screen() {
  std::vector<PaintedLine> out;
  for (auto& l : help_lines()) {
    PaintedLine p;
    p.text = std::move(l);
    p.paint = out.empty() ? Paint::kTitle : Paint::kNormal;
    out.push_back(std::move(p));
  }
  return out;
}

// Sends the signal `ui.typing` names to the selected process: only one of the view's (the job's,
// with a job) and, unless root, only with a job. The outcome on the status line.
void send_signal(TopUi& ui, const monitor::Model& model, bool job) {
  const auto sig = signal_number(ui.typing);
  const pid_t pid = ui.selected_pid;
  if (!sig) {
    ui.message = fmt::format("no signal {}", ui.typing);
    return;
  }
  const bool listed = std::any_of(model.processes.begin(), model.processes.end(),
                                  [pid](const monitor::ProcessModel& p) { return p.pid == pid; });
  if (pid <= 0 || !listed) {
    ui.message = fmt::format("{} is not in the view", pid);
    return;
  }
  if (::geteuid() != 0 && !job) {
    ui.message = "k signals the job's processes (--pid, --cgroup, --slurm-job) unless root";
    return;
  }
  if (::kill(pid, *sig) != 0) {
    ui.message = fmt::format("kill {} SIG{}: {}", pid, ui.typing, std::strerror(errno));
    return;
  }
  ui.message = fmt::format("sent SIG{} to {}", ui.typing, pid);
}

// The job's pace in `m` (a job's view: its processes are the job's).
JobPoint job_point(const monitor::Model& m) {
  JobPoint j;
  if (m.cgroup && m.cgroup->cpu_pct) {
    j.cpu_pct = m.cgroup->cpu_pct;
  } else if (!m.processes.empty()) {
    double sum = 0;
    for (const auto& p : m.processes) sum += p.cpu_pct;
    j.cpu_pct = sum;
  }
  for (const auto& p : m.processes)
    if (p.read_bytes_s) j.read_bytes_s = j.read_bytes_s.value_or(0) + *p.read_bytes_s;
  return j;
}

int plain_width() {
  if (const char* c = std::getenv("COLUMNS"); c != nullptr)
    if (auto v = text::to_uint(c); v && *v >= 40 && *v <= 1000) return static_cast<int>(*v);
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}

void print_plain(const monitor::Model& model, const TopSettings& s,
                 const std::vector<std::string>& notices, const std::string& status,
                 std::optional<monitor::Straggler> straggler = std::nullopt) {
  monitor::TopOptions o;
  o.straggler = std::move(straggler);
  o.width = plain_width();
  o.height = 0;
  o.sort = s.sort;
  o.title = s.title;
  o.notices = notices;
  o.status = status;
  for (const auto& l : monitor::top_view(model, o)) fmt::print("{}\n", l.text);
}

// The keys line; the I/O sort only where the view reads I/O.
std::string keys_live(const monitor::Model&) {
  return "q quit  h help  / filter  k kill  F follow  K kthreads  sort: c m p r i t";
}
std::string keys_replay(const monitor::Model&) {
  return "q quit  <- -> step  Home End  h help  / filter  F follow  K kthreads  sort: c m p r i t";
}

constexpr std::array<monitor::TopSort, 6> kSorts{
    monitor::TopSort::kCpu,      monitor::TopSort::kMemory, monitor::TopSort::kPid,
    monitor::TopSort::kRunQueue, monitor::TopSort::kIo,     monitor::TopSort::kTree};

// A sort key (the first letter of the sort's name: c m p r i t), or false. The I/O sort is taken
// whatever the view reads now: sorting by I/O reads every process's (detail_for_view), which
// shows the column where /proc/PID/io is readable.
bool apply_sort_key(int key, monitor::TopSort& sort, const monitor::Model&) {
  for (const auto k : kSorts)
    if (key == monitor::sort_name(k)[0]) {
      sort = k;
      return true;
    }
  return false;
}

// The view's options for `ui` on `model` (the list's selection synced to it first), the layout
// drawn kept in `ui`; the caller sets the status, notices, straggler and history. Returns the
// processes listed, in order.
std::vector<const monitor::ProcessModel*> view_options(TopUi& ui, const monitor::Model& model,
                                                       monitor::TopSort sort, const Screen& screen,
                                                       const std::string& title,
                                                       monitor::TopOptions& o) {
  auto visible =
      monitor::visible_processes(model, sort, ui.filter, ui.follow, ui.hide_kernel_threads);
  std::vector<pid_t> pids;
  pids.reserve(visible.size());
  for (const auto* p : visible) pids.push_back(p->pid);
  sync_selection(ui, pids);
  o.width = screen.width();
  o.height = screen.height();
  o.sort = sort;
  o.title = title;
  o.filter = ui.filter;
  o.follow = ui.follow;
  o.selected = ui.selected;
  o.first = ui.first;
  return visible;
}

// Draws the view and keeps its layout in `ui`.
monitor::TopLayout draw_view(Screen& screen, TopUi& ui, const monitor::Model& model,
                             const monitor::TopOptions& o) {
  monitor::TopLayout layout;
  screen.draw(painted(monitor::top_view(model, o, &layout)));
  ui.first = layout.first;
  ui.rows = std::max<std::size_t>(1, layout.rows);
  return layout;
}

tl::unexpected<Failure> failed(bool bad_input, Error e) {
  return tl::unexpected(Failure{bad_input, std::move(e)});
}

tl::unexpected<Failure> failed(bool bad_input, std::string what) {
  return failed(bad_input, Error{std::move(what), "", 0});
}

}  // namespace

std::vector<std::string> sort_names() {
  std::vector<std::string> names;
  for (const auto k : kSorts) names.emplace_back(monitor::sort_name(k));
  return names;
}

std::optional<monitor::TopSort> parse_sort(const std::string& s) {
  for (const auto k : kSorts)
    if (s == monitor::sort_name(k)) return k;
  return std::nullopt;
}

TopResult top_live(monitor::Sampler& sampler, const TopSettings& settings) {
  monitor::Sample previous, current;
  std::vector<std::string> notices;
  if (auto ok = sampler.sample(previous); !ok) {
    return failed(false, ok.error());
  }
  for (auto& n : sampler.take_notices()) notices.push_back(std::move(n));
  // Not a terminal (a pipe, a file, cron): one view as plain text, as --once.
  if (settings.once || ::isatty(STDOUT_FILENO) == 0) {
    ::usleep(static_cast<useconds_t>(settings.interval_ns / 1000));
    if (auto ok = sampler.sample(current); !ok) {
      return failed(false, ok.error());
    }
    for (auto& n : sampler.take_notices()) notices.push_back(std::move(n));
    auto once = monitor::Model::from(current, &previous);
    if (settings.job) {
      PythonFunctions python{host::Root()};
      python.fill(once);
      if (auto n = python.take_note(); !n.empty()) notices.push_back(std::move(n));
    }
    print_plain(once, settings, notices, "");
    return {};
  }
  std::string why;
  auto screen = Screen::open(why);
  if (!screen) {
    return failed(true, why);
  }
  // The host's disk, network, swap, fault and PSI rates about twice a second at an interval of
  // 250 ms or less (each over the span between two readings): a tenth of a second's rates are
  // noise to the eye, and reading vmstat, diskstats, net/dev and the PSI files is a tenth of a
  // 10 Hz frame's cost (bench/README.md). The CPU bars and memory stay at every interval.
  sampler.set_host_activity_every(monitor::samples_a_second(settings.interval_ns) / 2);
  const bool utf8 = locale_is_utf8();
  auto sort = settings.sort;
  TopUi ui;
  History history;
  auto model = monitor::Model::from(previous, nullptr);
  monitor::Model spare;  // the model before, its storage reused for the next (Model::into)
  // A job's view: each of its Python processes' current function, read from outside.
  std::optional<PythonFunctions> python;
  if (settings.job) python.emplace(host::Root());
  monitor::RankWatch ranks;  // the straggler of a distributed job, over the last 10 s
  const auto remember = [&history, &settings](const monitor::Model& m) {
    std::vector<std::optional<double>> util;
    std::vector<unsigned> indexes;
    for (const auto& g : m.gpus) {
      util.push_back(g.utilization_gpu_pct);
      indexes.push_back(g.index);
    }
    history.add(now_ns(CLOCK_MONOTONIC), std::clamp(m.cpu.busy_pct(), 0.0, 100.0),
                m.pressure.cpu ? std::optional<double>(m.pressure.cpu->some_pct) : std::nullopt,
                util, indexes, settings.job ? job_point(m) : JobPoint{});
  };
  // Off screen, a process's CPU is only its place in the order: read about once a second (the
  // rows on screen every interval), since reading every process's stat is most of the cost.
  const auto others_every = monitor::samples_a_second(settings.interval_ns);
  const auto draw = [&] {
    if (ui.mode == TopMode::kHelp) {
      screen->draw(help_screen());
      return;
    }
    monitor::TopOptions o;
    const auto visible = view_options(ui, model, sort, *screen, settings.title, o);
    o.visible = &visible;
    o.status = status_line(ui, keys_live(model));
    o.notices = notices;
    o.straggler = ranks.straggler();
    if (model.has_rates) o.history = history_lines(history, std::max(40, o.width), utf8);
    const auto layout = draw_view(*screen, ui, model, o);
    // The next sample reads the files beyond stat for these rows (and a page either side) only,
    // and the stat of the processes off screen about once a second.
    auto detail = monitor::detail_for_view(visible, layout, sort, model, others_every);
    detail.threads_every = others_every;  // a job's threads (--pid) as often as the others
    // A row whose process has not run since its last reading keeps it (its schedstat says so).
    detail.unchanged_every = others_every;
    // A row asleep for a second is asked about three times a second (a process that wakes
    // shows up to two samples late at 10 Hz).
    detail.quiet_every = std::max(1u, others_every / 3);
    sampler.set_process_detail(std::move(detail));
  };
  draw();
  const auto now_ms = [] { return now_ns(CLOCK_MONOTONIC) / 1'000'000; };
  const std::int64_t interval_ms = std::max<std::int64_t>(1, settings.interval_ns / 1'000'000);
  std::int64_t next = now_ms() + interval_ms;
  for (;;) {
    const std::int64_t left = std::clamp<std::int64_t>(next - now_ms(), 0, 1000);
    const int key = screen->read_key(static_cast<int>(left));
    const auto action = handle_key(ui, key);
    if (action == TopAction::kQuit) break;
    if (action == TopAction::kSignal) send_signal(ui, model, settings.job);
    if (action == TopAction::kUnhandled && apply_sort_key(key, sort, model)) sort_changed(ui);
    if (now_ms() >= next) {
      next += interval_ms;
      if (next < now_ms()) next = now_ms() + interval_ms;  // after a stall: no burst
      if (!ui.paused) {
        if (auto ok = sampler.sample(current); !ok) {
          screen.reset();
          return failed(false, ok.error());
        }
        for (auto& n : sampler.take_notices()) notices.push_back(std::move(n));
        monitor::Model::into(current, &previous, model, spare);
        std::swap(model, spare);
        if (python) {
          python->fill(model);
          if (auto n = python->take_note(); !n.empty()) notices.push_back(std::move(n));
        }
        ranks.add(model);
        remember(model);
        std::swap(previous, current);
      }
    } else if (action == TopAction::kNone) {
      continue;
    }
    draw();
  }
  return {};
}

TopResult top_replay(const store::Recording& recording, std::size_t index,
                     const TopSettings& settings) {
  const std::size_t n = recording.size();
  if (n == 0) {
    return failed(true, "the recording has no samples");
  }
  index = std::min(index, n - 1);
  const auto model_at = [&](std::size_t i) -> Result<monitor::Model> {
    auto now = recording.at(i);
    if (!now) return tl::unexpected(now.error());
    if (i == 0) return monitor::Model::from(*now, nullptr);
    auto before = recording.at(i - 1);
    if (!before) return tl::unexpected(before.error());
    return monitor::Model::from(*now, &*before);
  };
  auto model = model_at(index);
  if (!model) {
    return failed(false, model.error());
  }
  // The straggler at `i`: the ranks over the window that ends there, as the live view saw them.
  const auto interval_ns = std::max<std::int64_t>(recording.info().interval_ns, 1'000'000);
  // Models of the window before `i` (10 s; at most 120, each step's reading kept short).
  const std::size_t span =
      static_cast<std::size_t>(std::min<std::int64_t>(120, 10'000'000'000 / interval_ns + 1));
  const auto straggler_at = [&](std::size_t i) -> Result<std::optional<monitor::Straggler>> {
    monitor::RankWatch watch;
    for (std::size_t k = i >= span ? i - span : 0; k <= i; ++k) {
      auto m = model_at(k);
      if (!m) return tl::unexpected(m.error());
      watch.add(*m);
    }
    return watch.straggler();
  };
  auto straggler = straggler_at(index);
  if (!straggler) {
    return failed(false, straggler.error());
  }
  const auto status = [&](std::size_t i, const std::string& keys) {
    return fmt::format("replay {}/{}  {}", i + 1, n, keys);
  };
  if (settings.once) {
    print_plain(*model, settings, {}, status(index, ""), *straggler);
    return {};
  }
  std::string why;
  auto screen = Screen::open(why);
  if (!screen) {
    return failed(true, why);
  }
  auto sort = settings.sort;
  // The live view's keys (help, filter, scroll, follow, sort) on the sample shown; left and right
  // step through the samples, Home and End jump to the first and the last; no signals.
  TopUi ui;
  for (;;) {
    if (ui.mode == TopMode::kHelp) {
      screen->draw(help_screen());
    } else {
      monitor::TopOptions o;
      const auto visible = view_options(ui, *model, sort, *screen, settings.title, o);
      o.visible = &visible;
      o.status = status(index, status_line(ui, keys_replay(*model)));
      o.straggler = *straggler;
      (void)draw_view(*screen, ui, *model, o);
    }
    const int key = screen->read_key(1000);
    std::size_t next = index;
    const bool viewing = ui.mode == TopMode::kView;
    if (viewing && key == kKeyLeft && index > 0) {
      next = index - 1;
    } else if (viewing && key == kKeyRight && index + 1 < n) {
      next = index + 1;
    } else if (viewing && key == kKeyHome) {
      next = 0;
    } else if (viewing && key == kKeyEnd) {
      next = n - 1;
    } else if (viewing && (key == 'k' || key == ' ')) {
      ui.message = key == 'k' ? "a replay sends no signals" : "a replay is paused already";
    } else {
      const auto action = handle_key(ui, key);
      if (action == TopAction::kQuit) break;
      if (action == TopAction::kUnhandled && apply_sort_key(key, sort, *model)) sort_changed(ui);
    }
    if (next != index) {
      auto m = model_at(next);
      if (!m) {
        screen.reset();
        return failed(false, m.error());
      }
      auto found = straggler_at(next);
      if (!found) {
        screen.reset();
        return failed(false, found.error());
      }
      model = std::move(m);
      straggler = std::move(found);
      index = next;
    }
  }
  return {};
}

TopResult top_scope(const host::Root& root, const monitor::Scope& scope,
                    const monitor::SamplerOptions& options, std::int64_t interval_ns, bool once,
                    const std::string& sort) {
  TopSettings s;
  s.interval_ns = interval_ns;
  s.once = once;
  s.title = monitor::describe(scope);
  s.job = scope.kind != monitor::Scope::Kind::kAll;
  s.sort = s.job ? monitor::TopSort::kTree : monitor::TopSort::kCpu;
  if (const auto named = parse_sort(sort)) s.sort = *named;
  monitor::raise_open_file_limit();
  auto sampler = monitor::Sampler::open(root, options);
  if (!sampler) return refused(sampler.error());
  return top_live(**sampler, s);
}

}  // namespace dltune::tui
