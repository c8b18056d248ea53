// Sparklines (tui/sparkline.hpp).
#include "tui/sparkline.hpp"

#include <langinfo.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include <fmt/compile.h>
#include <fmt/core.h>

#include "monitor/top_view.hpp"

namespace dltune::tui {

namespace {

constexpr std::array<const char*, 8> kBlocks{"\u2581", "\u2582", "\u2583", "\u2584",
                                             "\u2585", "\u2586", "\u2587", "\u2588"};
constexpr std::array<char, 8> kAscii{'_', '.', '-', '=', '+', '*', '#', '%'};

// The last value as a percentage with `decimals` (0 or 1) decimals; "-" when there is none.
// The formats are compiled (a frame at 10 Hz draws these each time).
std::string last_value(const std::deque<std::optional<double>>& d, int decimals) {
  if (d.empty() || !d.back()) return "-";
  return decimals == 0 ? fmt::format(FMT_COMPILE("{:.0f}%"), *d.back())
                       : fmt::format(FMT_COMPILE("{:.1f}%"), *d.back());
}

// sparkline() of any sequence of optional values (the history's deques, read in place).
template <class Values>
std::string sparkline_of(const Values& values, double max, std::size_t columns, bool utf8) {
  std::string out;
  if (values.empty() || columns == 0) return out;
  const std::size_t n = values.size();
  const std::size_t cols = std::min(columns, n);
  out.reserve(utf8 ? cols * 3 : cols);  // a block character is 3 bytes of UTF-8
  for (std::size_t c = 0; c < cols; ++c) {
    // The values this character stands for: [from, to).
    const std::size_t from = c * n / cols, to = std::max(from + 1, (c + 1) * n / cols);
    std::optional<double> v;
    for (std::size_t i = from; i < to && i < n; ++i)
      if (values[i]) v = v ? std::max(*v, *values[i]) : *values[i];
    if (!v) {
      out += ' ';
      continue;
    }
    const double share = max > 0 ? std::clamp(*v / max, 0.0, 1.0) : 0.0;
    const auto level = static_cast<std::size_t>(std::min(7.0, std::floor(share * 8)));
    if (utf8)
      out += kBlocks[level];
    else
      out += kAscii[level];
  }
  return out;
}

}  // namespace

std::string sparkline(const std::vector<std::optional<double>>& values, double max,
                      std::size_t columns, bool utf8) {
  return sparkline_of(values, max, columns, utf8);
}

bool locale_is_utf8() {
  const char* set = ::nl_langinfo(CODESET);
  return set != nullptr && (std::strcmp(set, "UTF-8") == 0 || std::strcmp(set, "utf8") == 0);
}

void History::add(std::int64_t now_ns, double cpu_busy, std::optional<double> psi,
                  const std::vector<std::optional<double>>& gpu_util,
                  const std::vector<unsigned>& gpu_indexes, JobPoint job) {
  if (gpu_indexes.size() >= gpu_index.size()) gpu_index = gpu_indexes;
  at_ns.push_back(now_ns);
  cpu.push_back(cpu_busy);
  psi_cpu.push_back(psi);
  job_cpu.push_back(job.cpu_pct);
  job_read.push_back(job.read_bytes_s);
  if (gpus.size() < gpu_util.size()) {
    // A GPU first seen now: empty history before it.
    gpus.resize(gpu_util.size(), std::deque<std::optional<double>>(at_ns.size() - 1));
  }
  for (std::size_t g = 0; g < gpus.size(); ++g)
    gpus[g].push_back(g < gpu_util.size() ? gpu_util[g] : std::nullopt);
  while (!at_ns.empty() && now_ns - at_ns.front() > span_ns) {
    at_ns.pop_front();
    cpu.pop_front();
    psi_cpu.pop_front();
    job_cpu.pop_front();
    job_read.pop_front();
    for (auto& g : gpus) g.pop_front();
  }
}

std::vector<std::string> history_lines(const History& h, int width, bool utf8) {
  std::vector<std::string> out;
  if (h.at_ns.empty() || width < 40) return out;
  // "CPU  <line> 100%   PSI cpu <line> 12.5%": two lines of (width - 30) / 2 columns.
  const auto line = static_cast<std::size_t>((width - 30) / 2);
  out.push_back(fmt::format(
      FMT_COMPILE("CPU  {} {:>4}   PSI cpu {} {:>5}"),
      sparkline_of(h.cpu, 100, line, utf8) + std::string(line - std::min(line, h.cpu.size()), ' '),
      last_value(h.cpu, 0),
      sparkline_of(h.psi_cpu, 100, line, utf8) +
          std::string(line - std::min(line, h.psi_cpu.size()), ' '),
      last_value(h.psi_cpu, 1)));
  // The job's pace, each series scaled to its own peak over the window.
  const auto any = [](const std::deque<std::optional<double>>& d) {
    return std::any_of(d.begin(), d.end(), [](const auto& v) { return v.has_value(); });
  };
  if (any(h.job_cpu) || any(h.job_read)) {
    const auto peak = [](const std::deque<std::optional<double>>& d, double least) {
      double m = least;
      for (const auto& v : d)
        if (v) m = std::max(m, *v);
      return m;
    };
    const auto pad = [line](const std::deque<std::optional<double>>& d) {
      return std::string(line - std::min(line, d.size()), ' ');
    };
    const std::string read = h.job_read.empty() || !h.job_read.back()
                                 ? std::string("-")
                                 : monitor::compact_bytes(*h.job_read.back()).append("/s");
    out.push_back(fmt::format(FMT_COMPILE("JOB  {}{} {:>4}   read    {}{} {:>5}"),
                              sparkline_of(h.job_cpu, peak(h.job_cpu, 100), line, utf8),
                              pad(h.job_cpu), last_value(h.job_cpu, 0),
                              sparkline_of(h.job_read, peak(h.job_read, 1), line, utf8),
                              pad(h.job_read), read));
  }
  // The GPUs: cells of "GPUn <line> 100%  ", at least 12 columns of line each.
  if (h.gpus.empty()) return out;
  const std::size_t per_row =
      std::clamp<std::size_t>(static_cast<std::size_t>(width) / 24, 1, h.gpus.size());
  const std::size_t cell = static_cast<std::size_t>(width) / per_row;
  const std::size_t columns = cell > 16 ? cell - 16 : 1;
  std::string row;
  for (std::size_t g = 0; g < h.gpus.size(); ++g) {
    const auto& d = h.gpus[g];
    const unsigned index = g < h.gpu_index.size() ? h.gpu_index[g] : static_cast<unsigned>(g);
    row +=
        fmt::format(FMT_COMPILE("GPU{:<2}{}{} {:>4}  "), index, sparkline_of(d, 100, columns, utf8),
                    std::string(columns - std::min(columns, d.size()), ' '), last_value(d, 0));
    if ((g + 1) % per_row == 0) {
      out.push_back(row);
      row.clear();
    }
  }
  if (!row.empty()) out.push_back(row);
  return out;
}

}  // namespace dltune::tui
