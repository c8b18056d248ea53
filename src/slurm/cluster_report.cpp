#include "slurm/cluster_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/time_format.hpp"
#include "slurm/job_watch.hpp"

namespace dltune::slurm {

namespace {

// Thresholds, as `slurm efficiency` judges one node (efficiency.cpp) and the fleet rules alert
// (deploy/prometheus/dltune-alerts.yml, DltuneSlurmJobStragglerNode).
constexpr double kNodeGpusBusyEnough = 0.5;  // of the time a GPU's kernels ran
constexpr double kStragglerRatio = 0.6;      // of the job's median GPU utilisation
constexpr double kStragglerMedian = 0.2;     // below this no node stands out
constexpr double kCpuWaitStandsOut = 0.1;    // throttled or stalled share
constexpr double kCpuUsedEnough = 70;        // % of the CPUs given
constexpr double kReportGiB = 1024.0 * 1024 * 1024;

std::optional<double> finite_or_none(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string percent_text(double share) {
  return fmt::format("{:.0f}%", share * 100);
}

std::string bytes_text(double b) {
  return text::human_bytes(static_cast<std::uint64_t>(std::max(0.0, b)));
}

// A node that stands out from the others by `get` (a share of the time): the highest, at
// kCpuWaitStandsOut or more and more than twice the median of the others' (set in `others_median`).
const NodeUse* stands_out(const std::vector<NodeUse>& nodes, std::optional<double> NodeUse::*get,
                          double& others_median) {
  std::vector<const NodeUse*> with;
  for (const auto& n : nodes)
    if (n.*get) with.push_back(&n);
  if (with.size() < 2) return nullptr;
  const auto* top = *std::max_element(with.begin(), with.end(),
                                      [&](auto* a, auto* b) { return *(a->*get) < *(b->*get); });
  std::vector<double> others;
  for (const auto* n : with)
    if (n != top) others.push_back(*(n->*get));
  const double top_v = *(top->*get);
  others_median = median_of(others);
  return top_v >= kCpuWaitStandsOut && top_v > 2 * others_median ? top : nullptr;
}

// What else the node's series say about it, for the evidence.
std::string node_signals(const NodeUse& n) {
  std::vector<std::string> s;
  if (n.cpus_used && n.cpus)
    s.push_back(fmt::format("{:.1f} of {:.0f} CPUs used", *n.cpus_used, *n.cpus));
  if (n.throttled_share && *n.throttled_share > 0.01)
    s.push_back(
        fmt::format("CPU quota throttled in {} of periods", percent_text(*n.throttled_share)));
  if (n.cpu_stall_share && *n.cpu_stall_share > 0.01)
    s.push_back(
        fmt::format("tasks waited for a CPU {} of the time", percent_text(*n.cpu_stall_share)));
  return s.empty() ? std::string() : " (" + text::join(s, ", ") + ")";
}

}  // namespace

std::optional<double> NodeUse::gpu_utilization() const {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& g : gpus)
    if (g.utilization) {
      sum += *g.utilization;
      ++n;
    }
  return n == 0 ? std::nullopt : std::optional<double>(sum / static_cast<double>(n));
}

ClusterReport judge_cluster(const ClusterUse& use) {
  ClusterReport r;
  r.use = use;
  const auto& nodes = r.use.nodes;
  double given = 0, used = 0, gpu_sum = 0;
  std::size_t gpu_n = 0;
  for (const auto& n : nodes) {
    if (n.cpus && n.cpus_used && *n.cpus > 0) {
      given += *n.cpus;
      used += *n.cpus_used;
    }
    if (n.memory_peak_bytes && n.memory_limit_bytes && *n.memory_limit_bytes > 0)
      r.memory_pct =
          std::max(r.memory_pct.value_or(0), *n.memory_peak_bytes / *n.memory_limit_bytes * 100);
    for (const auto& g : n.gpus)
      if (g.utilization) {
        gpu_sum += *g.utilization;
        ++gpu_n;
      }
  }
  if (given > 0) r.cpu_pct = used / given * 100;
  if (gpu_n > 0) r.gpu_pct = gpu_sum / static_cast<double>(gpu_n) * 100;
  auto set_action = [&](std::string a) {
    if (r.action.empty()) r.action = std::move(a);
  };

  // OOM kills first: the job lost work.
  for (const auto& n : nodes)
    if (n.oom_kills && *n.oom_kills > 0) {
      r.findings.push_back(fmt::format(
          "{:.0f} process(es) of the job were killed for memory on {} (OOM kills in its group): "
          "its limit there is {}",
          *n.oom_kills, n.node,
          n.memory_limit_bytes ? bytes_text(*n.memory_limit_bytes) : "unknown"));
      const double want =
          std::max(n.memory_peak_bytes.value_or(0), n.memory_limit_bytes.value_or(0));
      set_action(want > 0
                     ? fmt::format("ask for more memory per node: --mem={:.0f}M or more (the "
                                   "peak on {} was {})",
                                   std::ceil(want * 1.5 / (1024 * 1024)), n.node, bytes_text(want))
                     : std::string("ask for more memory per node (--mem)"));
    }

  // The node that held the others back. GPUs first: in a synchronous job the others' GPUs
  // stay busy in the collective while they wait, so the least busy is the one starved.
  std::vector<std::pair<double, const NodeUse*>> busy;
  for (const auto& n : nodes)
    if (const auto u = n.gpu_utilization()) busy.emplace_back(*u, &n);
  const NodeUse* held = nullptr;
  if (busy.size() >= 2) {
    const auto low = *std::min_element(busy.begin(), busy.end());
    std::vector<double> others;
    for (const auto& [u, n] : busy)
      if (n != low.second) others.push_back(u);
    const double m = median_of(others);
    if (m >= kStragglerMedian && low.first < kStragglerRatio * m) {
      held = low.second;
      // Its least busy GPU: the rank there is the one to look at first (NVML's index; `dltune
      // top --slurm-job` on the node shows which rank's process holds it).
      std::string gpu;
      if (held->gpus.size() > 1) {
        const NodeGpuUse* least = nullptr;
        for (const auto& g : held->gpus)
          if (g.utilization && (least == nullptr || *g.utilization < *least->utilization))
            least = &g;
        if (least != nullptr)
          gpu =
              fmt::format(", GPU {} the least ({})", least->gpu, percent_text(*least->utilization));
      }
      r.held_back_why = fmt::format(
          "its GPUs were busy {} of the time{}, the other {} node(s)' {} (median): they waited "
          "for it in the collective{}",
          percent_text(low.first), gpu, others.size(), percent_text(m), node_signals(*held));
    }
  } else if (busy.empty()) {
    // Without GPUs: the node whose work was held back by its CPUs while the others waited.
    double others = 0;
    if (const auto* n = stands_out(nodes, &NodeUse::throttled_share, others)) {
      held = n;
      r.held_back_why = fmt::format(
          "its CPU quota throttled it in {} of its periods, the other nodes in {} (median){}",
          percent_text(*n->throttled_share), percent_text(others), node_signals(*n));
    } else if (const auto* s = stands_out(nodes, &NodeUse::cpu_stall_share, others)) {
      held = s;
      r.held_back_why = fmt::format(
          "its tasks waited for a CPU {} of the time (its group's cpu.pressure), the other "
          "nodes' {} (median){}",
          percent_text(*s->cpu_stall_share), percent_text(others), node_signals(*s));
    }
  }
  if (held != nullptr) {
    r.held_back_by = held->node;
    r.findings.push_back(fmt::format("{} held the others back: {}", held->node, r.held_back_why));
    set_action(
        r.use.running
            ? fmt::format("on {}: `dltune profile --slurm-job {}` names what its ranks wait for "
                          "(input pipeline, CPU, storage) with the fix to try first; `dltune "
                          "check` there shows what differs from the other nodes",
                          held->node, r.use.job_id)
            : fmt::format("look at {} first: `dltune check` there shows what differs from the "
                          "other nodes, and in the next run `dltune profile --slurm-job {}` on "
                          "it names what its ranks wait for",
                          held->node, r.use.job_id));
  }

  // GPUs left waiting on every node alike: the job does not feed them.
  std::vector<std::string> idle;
  for (const auto& n : nodes)
    if (const auto u = n.gpu_utilization(); u && *u < kNodeGpusBusyEnough && &n != held)
      idle.push_back(fmt::format("{} {}", n.node, percent_text(*u)));
  if (!idle.empty()) {
    r.findings.push_back(fmt::format(
        "its GPUs were busy under half the time ({}): they wait for the job's input, CPU or I/O",
        text::join(idle, ", ")));
    set_action(fmt::format(
        "find what the GPUs wait for: `dltune profile --slurm-job {}` on a node of the job names "
        "it (input pipeline, CPU contention, storage) with the fix to try first",
        r.use.job_id));
  }

  // CPUs given and left idle: fewer whole CPUs used than given, under 70%.
  if (r.cpu_pct && *r.cpu_pct < kCpuUsedEnough) {
    double most = 0, per_node = 0;
    for (const auto& n : nodes)
      if (n.cpus_used && n.cpus) {
        most = std::max(most, *n.cpus_used);
        per_node = std::max(per_node, *n.cpus);
      }
    const int enough = std::max(1, static_cast<int>(std::ceil(most - 0.1)));
    if (enough < per_node) {
      r.findings.push_back(fmt::format(
          "the job used {:.1f} of the {:.0f} CPUs it was given ({:.0f}%); its busiest node used "
          "{:.1f}",
          used, given, *r.cpu_pct, most));
      set_action(
          fmt::format("ask for {} CPUs per node (--cpus-per-task times tasks per node) "
                      "rather than {:.0f}",
                      enough, per_node));
    }
  }

  // Memory asked for and never used: a peak under a third of a limit of a GiB or more.
  double peak = 0, limit = 0;
  bool all_low = !nodes.empty();
  for (const auto& n : nodes) {
    if (!n.memory_peak_bytes || !n.memory_limit_bytes || *n.memory_limit_bytes < kReportGiB) {
      all_low = false;
      continue;
    }
    peak = std::max(peak, *n.memory_peak_bytes);
    limit = std::max(limit, *n.memory_limit_bytes);
    if (*n.memory_peak_bytes * 3 >= *n.memory_limit_bytes) all_low = false;
  }
  if (all_low && limit > 0) {
    r.findings.push_back(
        fmt::format("its memory peaked at {} against a limit of {} per node ({:.0f}%)",
                    bytes_text(peak), bytes_text(limit), peak / limit * 100));
    set_action(
        fmt::format("ask for --mem={:.0f}G per node (its peak and a half), leaving the rest "
                    "to other jobs",
                    std::max(1.0, std::ceil(peak * 1.5 / kReportGiB))));
  }
  return r;
}

namespace {

tl::unexpected<Failure> report_failure(const Error& e) {
  return tl::unexpected(Failure{false, e});
}

// The value per instance of a query whose series carry `instance`.
Result<std::map<std::string, double>> by_instance(const PrometheusApi& api, const std::string& q,
                                                  double at) {
  auto v = api.query(q, at);
  if (!v) return tl::unexpected(v.error());
  std::map<std::string, double> out;
  for (const auto& s : *v)
    if (const auto it = s.labels.find("instance"); it != s.labels.end() && std::isfinite(s.value))
      out[it->second] = s.value;
  return out;
}

}  // namespace

tl::expected<ClusterReport, Failure> cluster_report(const ClusterReportRequest& request) {
  if (auto ok = check_job_id(request.job_id); !ok) return refused(ok.error().message());
  if (request.lookback_ns < 1'000'000'000) return refused("--lookback: at least 1s");
  if (auto url = serve::parse_http_url(request.prometheus_url); !url)
    return refused("--prometheus: " + url.error().message());
  auto api = PrometheusApi::open(request.prometheus_url, request.timeout, request.ca_file);
  if (!api) return report_failure(api.error());
  const double now = request.now.value_or(
      static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count()) /
      1000);
  const double lookback = static_cast<double>(request.lookback_ns) / 1e9;
  const std::string sel = fmt::format("{{slurm_job_id=\"{}\",step=\"\"}}", request.job_id);

  // Where and when: the job's CPU counter per node, first over the whole window at a step that
  // keeps to Prometheus's 11,000 points a series, then over the span found, finer. Each point is
  // the last sample in the step before it (last_over_time): no gap between the points however
  // short the job, and no point once its series stopped (a plain selector would repeat a
  // series' last sample for Prometheus's 5-minute lookback, unless a stale marker ended it).
  auto per_node = [&](const char* metric, double step) {
    return fmt::format("max by (instance) (last_over_time({}{}[{:.0f}s]))", metric, sel, step);
  };
  // A range query is evaluated at start, start + step, ... up to end: a start a whole number of
  // steps before `now` evaluates at `now` too.
  const double coarse = std::max(1.0, std::ceil(lookback / 10000));
  const double from = now - coarse * std::ceil(lookback / coarse);
  const char* metric = "dltune_job_cpu_seconds_total";
  auto found = api->query_range(per_node(metric, coarse), from, now, coarse);
  if (!found) return report_failure(found.error());
  if (found->empty()) {  // a group without CPU accounting: its memory says where and when
    metric = "dltune_job_memory_bytes";
    found = api->query_range(per_node(metric, coarse), from, now, coarse);
    if (!found) return report_failure(found.error());
  }
  const bool counter = metric == std::string_view("dltune_job_cpu_seconds_total");
  if (found->empty())
    return refused(fmt::format(
        "{} has no series of Slurm job {} in the last {} (dltune_job_cpu_seconds_total{}): is "
        "`dltune serve` running on the job's nodes and scraped by this Prometheus, and did the "
        "job run in that window (--lookback)?",
        api->url().text(), request.job_id,
        std::fmod(lookback, 86400) == 0  ? fmt::format("{:.0f} d", lookback / 86400)
        : std::fmod(lookback, 3600) == 0 ? fmt::format("{:.0f} h", lookback / 3600)
                                         : text::human_duration(lookback),
        sel));
  double a = now, b = from;
  for (const auto& s : *found)
    if (!s.points.empty()) {
      a = std::min(a, s.points.front().first - coarse);
      b = std::max(b, s.points.back().first);
    }
  a = std::max(a, from);
  const double fine = std::max(1.0, std::ceil((b - a) / 10000));
  a = b - fine * std::ceil((b - a) / fine);
  auto span = api->query_range(per_node(metric, fine), a, b, fine);
  if (!span) return report_failure(span.error());
  // Running: Prometheus has the series now (a plain selector, which a stale marker ends).
  auto current = api->query(fmt::format("max by (instance) ({}{})", metric, sel), now);
  if (!current) return report_failure(current.error());

  ClusterUse use;
  use.job_id = request.job_id;
  use.source = api->url().text();
  use.running = !current->empty();
  use.start = b;
  use.end = a;
  for (const auto& s : *span) {
    const auto it = s.labels.find("instance");
    if (it == s.labels.end() || s.points.empty()) continue;
    NodeUse n;
    n.instance = n.node = it->second;
    const auto& [t0, v0] = s.points.front();
    const auto& [t1, v1] = s.points.back();
    n.first_seen = t0;
    n.last_seen = t1;
    if (counter && t1 > t0 && v1 >= v0) n.cpus_used = (v1 - v0) / (t1 - t0);
    use.start = std::min(use.start, t0);
    use.end = std::max(use.end, t1);
    use.nodes.push_back(std::move(n));
  }
  if (use.nodes.empty())
    return refused(fmt::format("{} has no series of Slurm job {} with an instance label",
                               api->url().text(), request.job_id));
  if (use.running) use.end = std::max(use.end, now);

  // The rest at the span's end, over the span.
  const double at = use.end;
  const auto window =
      fmt::format("[{}s]", static_cast<long long>(std::ceil(use.end - use.start + 2 * fine)));
  struct Want {
    std::string query;
    std::optional<double> NodeUse::*into;
  };
  const Want wants[] = {
      {"max by (instance) (max_over_time(dltune_job_cpus" + sel + window + "))", &NodeUse::cpus},
      {"max by (instance) (max_over_time(dltune_job_cpu_quota_cpus" + sel + window + "))",
       &NodeUse::quota_cpus},
      {"max by (instance) (increase(dltune_job_cpu_throttled_periods_total" + sel + window +
           ") / increase(dltune_job_cpu_periods_total" + sel + window + "))",
       &NodeUse::throttled_share},
      {fmt::format("max by (instance) (rate(dltune_job_pressure_stall_seconds_total{{slurm_job_id="
                   "\"{}\",step=\"\",resource=\"cpu\",kind=\"some\"}}{}))",
                   request.job_id, window),
       &NodeUse::cpu_stall_share},
      {"max by (instance) (max_over_time(dltune_job_memory_peak_bytes" + sel + window + "))",
       &NodeUse::memory_peak_bytes},
      {"max by (instance) (max_over_time(dltune_job_memory_limit_bytes" + sel + window + "))",
       &NodeUse::memory_limit_bytes},
      {"max by (instance) (max_over_time(dltune_job_oom_kills_total" + sel + window + "))",
       &NodeUse::oom_kills},
  };
  for (const auto& w : wants) {
    auto v = by_instance(*api, w.query, at);
    if (!v) return report_failure(v.error());
    for (auto& n : use.nodes)
      if (const auto it = v->find(n.instance); it != v->end())
        n.*w.into = finite_or_none(it->second);
  }
  // A peak where the group has no peak file: the most its memory was seen at.
  {
    auto v = by_instance(
        *api, "max by (instance) (max_over_time(dltune_job_memory_bytes" + sel + window + "))", at);
    if (!v) return report_failure(v.error());
    for (auto& n : use.nodes)
      if (const auto it = v->find(n.instance); it != v->end())
        n.memory_peak_bytes = std::max(n.memory_peak_bytes.value_or(0), it->second);
  }
  // The GPUs: the job's share of each and the memory its processes held.
  const std::pair<const char*, std::optional<double> NodeGpuUse::*> gpu_wants[] = {
      {"avg_over_time(dltune_job_gpu_utilization_ratio", &NodeGpuUse::utilization},
      {"max_over_time(dltune_job_gpu_memory_used_bytes", &NodeGpuUse::memory_bytes},
  };
  for (const auto& [fn, into] : gpu_wants) {
    auto v = api->query(fmt::format("max by (instance, gpu, uuid) ({}{}{}))", fn, sel, window), at);
    if (!v) return report_failure(v.error());
    for (const auto& s : *v) {
      const auto get = [&](const char* k) {
        const auto it = s.labels.find(k);
        return it == s.labels.end() ? std::string() : it->second;
      };
      for (auto& n : use.nodes) {
        if (n.instance != get("instance")) continue;
        auto g = std::find_if(n.gpus.begin(), n.gpus.end(),
                              [&](const NodeGpuUse& x) { return x.uuid == get("uuid"); });
        if (g == n.gpus.end()) g = n.gpus.insert(n.gpus.end(), {get("gpu"), get("uuid"), {}, {}});
        (*g).*into = finite_or_none(s.value);
      }
    }
  }
  // The nodes' names, from the exporters' build info.
  {
    auto v = api->query(
        "max by (instance, Hostname) (last_over_time(dltune_build_info" + window + "))", at);
    if (!v) return report_failure(v.error());
    for (const auto& s : *v) {
      const auto i = s.labels.find("instance"), h = s.labels.find("Hostname");
      if (i == s.labels.end() || h == s.labels.end() || h->second.empty()) continue;
      for (auto& n : use.nodes)
        if (n.instance == i->second) n.node = h->second;
    }
  }
  for (auto& n : use.nodes)
    std::sort(n.gpus.begin(), n.gpus.end(), [](const NodeGpuUse& x, const NodeGpuUse& y) {
      return x.gpu.size() != y.gpu.size() ? x.gpu.size() < y.gpu.size() : x.gpu < y.gpu;
    });
  std::sort(use.nodes.begin(), use.nodes.end(), [](const NodeUse& x, const NodeUse& y) {
    return std::tie(x.node, x.instance) < std::tie(y.node, y.instance);
  });
  return judge_cluster(use);
}

namespace {

std::string utc_text(double t) {
  return text::format_time(static_cast<std::int64_t>(t), "%Y-%m-%dT%H:%M:%SZ",
                           text::TimeZone::kUtc);
}

}  // namespace

Json to_json(const ClusterReport& r) {
  const auto& u = r.use;
  Json nodes = Json::array();
  for (const auto& n : u.nodes) {
    Json gpus = Json::array();
    for (const auto& g : n.gpus)
      gpus.push_back({{"gpu", g.gpu},
                      {"uuid", g.uuid},
                      {"utilization", json_or_null(g.utilization)},
                      {"memory_bytes", json_or_null(g.memory_bytes)}});
    nodes.push_back({{"node", n.node},
                     {"instance", n.instance},
                     {"first_seen", utc_text(n.first_seen)},
                     {"last_seen", utc_text(n.last_seen)},
                     {"cpus", json_or_null(n.cpus)},
                     {"cpus_used", json_or_null(n.cpus_used)},
                     {"cpu_quota_cpus", json_or_null(n.quota_cpus)},
                     {"cpu_throttled_share", json_or_null(n.throttled_share)},
                     {"cpu_stall_share", json_or_null(n.cpu_stall_share)},
                     {"memory_peak_bytes", json_or_null(n.memory_peak_bytes)},
                     {"memory_limit_bytes", json_or_null(n.memory_limit_bytes)},
                     {"oom_kills", json_or_null(n.oom_kills)},
                     {"gpu_utilization", json_or_null(n.gpu_utilization())},
                     {"gpus", std::move(gpus)}});
  }
  return {{"schema", "dltune.slurm-report/1"},
          {"job_id", u.job_id},
          {"source", u.source},
          {"start", utc_text(u.start)},
          {"end", utc_text(u.end)},
          {"seconds", u.end - u.start},
          {"running", u.running},
          {"nodes", std::move(nodes)},
          {"cpu_pct", json_or_null(r.cpu_pct)},
          {"memory_pct", json_or_null(r.memory_pct)},
          {"gpu_pct", json_or_null(r.gpu_pct)},
          {"held_back_by", r.held_back_by.empty() ? Json(nullptr) : Json(r.held_back_by)},
          {"held_back_why", r.held_back_why.empty() ? Json(nullptr) : Json(r.held_back_why)},
          {"findings", r.findings},
          {"action", r.action.empty() ? Json(nullptr) : Json(r.action)}};
}

std::string render_text(const ClusterReport& r) {
  const auto& u = r.use;
  std::string out = fmt::format(
      "Slurm job {} on {} node(s), {} to {} UTC ({}{}), from {}\n", u.job_id, u.nodes.size(),
      utc_text(u.start), utc_text(u.end).substr(11, 8), text::human_duration(u.end - u.start),
      u.running ? ", still running" : "", u.source);
  std::size_t width = 4;
  for (const auto& n : u.nodes) width = std::max(width, n.node.size());
  out += fmt::format("  {:<{}}  {:>13}  {:>22}  {:>9}  {:>9}  {}\n", "node", width, "CPUs used",
                     "memory peak / limit", "throttled", "OOM kills", "GPUs busy");
  for (const auto& n : u.nodes) {
    const auto cpu = n.cpus_used
                         ? fmt::format("{:.1f} of {}", *n.cpus_used,
                                       n.cpus ? fmt::format("{:.0f}", *n.cpus) : std::string("?"))
                         : std::string("unknown");
    const auto mem =
        fmt::format("{} / {}", n.memory_peak_bytes ? bytes_text(*n.memory_peak_bytes) : "?",
                    n.memory_limit_bytes ? bytes_text(*n.memory_limit_bytes) : "no limit");
    std::string gpus;
    if (const auto g = n.gpu_utilization())
      gpus = fmt::format("{} on {} GPU(s)", percent_text(*g), n.gpus.size());
    else
      gpus = n.gpus.empty() ? "none" : "unknown";
    out += fmt::format("  {:<{}}  {:>13}  {:>22}  {:>9}  {:>9}  {}\n", n.node, width, cpu, mem,
                       n.throttled_share ? percent_text(*n.throttled_share) : "-",
                       n.oom_kills ? fmt::format("{:.0f}", *n.oom_kills) : "-", gpus);
  }
  if (r.cpu_pct || r.gpu_pct)
    out += fmt::format("  the job: {}{}{}\n",
                       r.cpu_pct ? fmt::format("CPUs {:.0f}% used", *r.cpu_pct) : "",
                       r.cpu_pct && r.gpu_pct ? ", " : "",
                       r.gpu_pct ? fmt::format("GPUs {:.0f}% busy", *r.gpu_pct) : "");
  for (const auto& f : r.findings) out += "  ! " + f + "\n";
  out += r.action.empty() ? "No node held the others back, and the job uses what it was given.\n"
                          : "Action: " + r.action + "\n";
  return out;
}

}  // namespace dltune::slurm
