#include "diagnose/profile_job.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "diagnose/profile_text.hpp"
#include "store/recording.hpp"

namespace dltune::diagnose {

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

tl::unexpected<ProfileFailure> failure(bool bad_input, std::string what) {
  return tl::unexpected(ProfileFailure{bad_input, Error{std::move(what), "", 0}});
}

JobVerdict judge_one(const Rules& rules, const WindowBuilder& b, std::int64_t skip_ns,
                     const std::string& source, std::vector<std::string> notes) {
  JobVerdict v;
  const auto first = steady_start(b.window(), skip_ns);
  v.profile = analyze(rules, b.window(), first);
  v.job = b.job();
  for (auto& n : profile_notes(v.profile, b.job())) notes.push_back(std::move(n));
  v.doc = to_json(v.profile);
  v.doc["source"] = source;
  v.doc["job"] = {{"pid", b.job().main},
                  {"comm", b.job().comm},
                  {"cmdline", b.job().cmdline},
                  {"workers", b.job().max_workers},
                  {"children", b.job().max_children},
                  {"ended", b.job().main_gone}};
  v.source = source;
  v.notes = std::move(notes);
  return v;
}

}  // namespace

ProfileResult<ProfileReport> judge_job(const Rules& rules, const JobWindows& windows,
                                       const JudgeRequest& request) {
  const auto& b = windows.job();
  if (b.job().main == 0)
    return failure(true, request.source +
                             ": no job in it (record a job: dltune record --pid PID, or dltune "
                             "run --record; a host-wide recording has no job to judge)");
  if (b.window().samples.size() < 2)
    return failure(false, fmt::format("{}: too few samples to judge ({}); profile longer",
                                      request.source, b.window().samples.size()));
  ProfileReport report;
  // Under torchrun each rank is a training job of its own, with its own workers: each is
  // judged alone, the first rank's verdict leads (what report shows), all are listed.
  for (const auto& [pid, rb] : windows.ranks())
    if (rb.job().main != 0 && rb.window().samples.size() >= 2)
      report.parts.push_back(judge_one(rules, rb, request.skip_ns,
                                       fmt::format("{}, rank pid {}", request.source, pid), {}));
  if (report.parts.empty()) {
    report.parts.push_back(judge_one(rules, b, request.skip_ns, request.source, request.notes));
    report.doc = report.parts.front().doc;
  } else {
    auto& lead = report.parts.front();
    report.doc = lead.doc;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : report.parts) {
      auto doc = r.doc;
      doc["notes"] = r.notes;
      all.push_back(std::move(doc));
    }
    lead.notes.insert(lead.notes.begin(), request.notes.begin(), request.notes.end());
    lead.notes.insert(lead.notes.begin(),
                      fmt::format("pid {} is a launcher ({}) with {} ranks: each rank is judged "
                                  "on its own; this is the first",
                                  b.job().main, b.job().comm, report.parts.size()));
    report.doc["ranks"] = std::move(all);
    report.doc["launcher"] = {{"pid", b.job().main}, {"cmdline", b.job().cmdline}};
  }
  report.doc["notes"] = report.parts.front().notes;
  for (const auto& [k, v] : request.extra.items()) report.doc[k] = v;
  if (!request.save_to.empty()) {
    auto& notes = report.parts.front().notes;
    if (auto ok = store::add_document(request.save_to, "profile", report.doc); !ok)
      notes.push_back("the verdict could not be saved in the recording: " + ok.error().message());
    else
      notes.push_back("the verdict is saved in " + request.save_to + " (dltune report shows it)");
  }
  return report;
}

std::string render_text(const ProfileReport& report) {
  std::string out;
  for (std::size_t i = 0; i < report.parts.size(); ++i) {
    const auto& p = report.parts[i];
    if (i > 0) out += "\n";
    out += render_text(p.profile, p.job, p.source, p.notes);
  }
  return out;
}

ProfileResult<RecordedJob> read_recorded_job(const std::string& path) {
  auto rec = store::Recording::open(path);
  if (!rec) return tl::unexpected(ProfileFailure{true, rec.error()});
  RecordedJob job;
  auto walked = (*rec)->for_each(0, (*rec)->size(), [&](std::size_t, monitor::Sample&& s) {
    job.windows.add(std::move(s));
    return Result<void>{};
  });
  if (!walked) return tl::unexpected(ProfileFailure{false, walked.error()});
  const auto& info = (*rec)->info();
  job.launched = !info.command.empty() || info.scope.rfind("run ", 0) == 0;
  return job;
}

ProfileResult<LiveJob> sample_live(const host::Root& root, const LiveRequest& request) {
  const bool group = !request.cgroup.empty();
  if (!group && ::kill(request.pid, 0) != 0 && errno == ESRCH)
    return failure(true, fmt::format("--pid {}: no such process", request.pid));
  if (request.duration_ns < request.interval_ns * 2)
    return failure(true, fmt::format("--duration {}: too short (at least two intervals, {})",
                                     text::format_duration_ns(request.duration_ns),
                                     text::format_duration_ns(request.interval_ns * 2)));
  auto options = request.sampler;
  options.scope = group ? monitor::Scope{monitor::Scope::Kind::kCgroup, 0, request.cgroup}
                        : monitor::Scope{monitor::Scope::Kind::kTree, request.pid, {}};
  auto sampler = monitor::Sampler::open(root, options);
  if (!sampler) return tl::unexpected(ProfileFailure{true, sampler.error()});
  if (request.on_start) request.on_start();
  LiveJob live;
  // SIGINT, SIGTERM and SIGHUP end the sampling early (synchronously, through sigtimedwait).
  sigset_t stop, old;
  ::sigemptyset(&stop);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop, s);
  ::pthread_sigmask(SIG_BLOCK, &stop, &old);
  const auto start = now_ns(CLOCK_MONOTONIC);
  bool interrupted = false;
  int gone = 0;
  for (std::int64_t next = start;;) {
    monitor::Sample s;
    if (auto ok = (*sampler)->sample(s); !ok) {
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
      return tl::unexpected(ProfileFailure{false, ok.error()});
    }
    // A zombie main process has ended: its parent just has not reaped it yet.
    const bool has_main =
        (!group || s.cgroup) &&
        std::any_of(s.processes.begin(), s.processes.end(), [](const auto& p) {
          return p.role == monitor::Role::kMain && p.state != 'Z' && p.state != 'X';
        });
    live.windows.add(std::move(s));
    for (auto& n : (*sampler)->take_notices()) live.notes.push_back(std::move(n));
    gone = has_main ? 0 : gone + 1;
    if (gone >= 2 || (live.windows.job().job().main == 0 && gone >= 1)) break;  // the job ended
    next += request.interval_ns;
    const auto now = now_ns(CLOCK_MONOTONIC);
    if (now - start >= request.duration_ns) break;
    if (next > now) {
      timespec ts{static_cast<time_t>((next - now) / kSecond),
                  static_cast<long>((next - now) % kSecond)};
      if (::sigtimedwait(&stop, nullptr, &ts) > 0) {
        interrupted = true;
        break;
      }
    } else {
      next = now;  // late: do not make up for it with a burst
    }
  }
  // A signal that came while a sample was taken is still pending: taken here, not left to
  // kill the process before it says anything.
  for (timespec zero{}; ::sigtimedwait(&stop, nullptr, &zero) > 0;) interrupted = true;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (interrupted) live.notes.push_back("stopped early by a signal: judged on what was seen");
  if (live.windows.job().job().main == 0)
    return failure(
        false,
        group ? fmt::format("the job's group {} has no process to judge", request.cgroup)
              : fmt::format("--pid {}: the process ended before it could be sampled", request.pid));
  live.seconds = static_cast<double>(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
  return live;
}

}  // namespace dltune::diagnose
