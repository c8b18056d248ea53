#include "record/record_session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/core.h>

#include "audit/check.hpp"
#include "audit/host_check.hpp"
#include "audit/rules.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "monitor/top_view.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"

namespace dltune::record {

Result<std::unique_ptr<RecordSession>> RecordSession::create(const RecordSetup& setup) {
  store::RecordingInfo info;
  info.dltune_version = DLTUNE_VERSION;
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  info.hostname = host;
  info.started_wall_ns = now_ns(CLOCK_REALTIME);
  info.interval_ns = setup.interval_ns;
  info.scope = setup.scope;
  info.command = setup.command;
  store::WriterOptions wo;
  wo.force = setup.force;
  // A batch of about ten seconds: a crash loses at most that (and the second of samples the
  // recorder holds, below), and each commit's fsync is paid once per batch, not per sample.
  wo.batch = static_cast<std::size_t>(std::clamp<std::int64_t>(
      10'000'000'000 / std::max<std::int64_t>(setup.interval_ns, 1), 1, 100));
  auto writer = store::RecordingWriter::create(setup.path, info, wo);
  if (!writer) return tl::unexpected(writer.error());
  std::unique_ptr<RecordSession> s(new RecordSession());
  s->setup_ = setup;
  s->writer_ = std::move(*writer);
  return s;
}

RecordSession::~RecordSession() {
  if (recorder_) recorder_->stop();
}

Result<void> RecordSession::start(const host::Root& root, const monitor::SamplerOptions& options) {
  auto sampler = monitor::Sampler::open(root, options);
  if (!sampler) return tl::unexpected(sampler.error());
  store::RecorderOptions ro;
  ro.interval_ns = setup_.interval_ns;
  ro.duration_ns = setup_.duration_ns;
  ro.on_notice = setup_.notice;
  // Up to a second of samples (ten at most) written together, while SQLite is warm.
  ro.hold = std::min(monitor::samples_a_second(setup_.interval_ns), 10u);
  // A job's tree: its main process's Python stacks too, each interval's kept with its sample,
  // and its ranks' under a launcher.
  if (setup_.python_interval_ns > 0 && options.scope.kind == monitor::Scope::Kind::kTree &&
      !python_) {
    auto log = store::PythonStackLog::start(root, options.scope.pid, setup_.python_interval_ns);
    if (log) {
      python_ = std::move(*log);
    } else if (!pystack::not_python(log.error())) {
      // (A job that is not Python has no stacks, and nothing to say about it.)
      notice("no Python stacks: " + log.error().message());
    }
    ro.after_sample = [this, root](const monitor::Sample& s) {
      if (python_) (void)python_->close_interval(s.wall_ns);
      follow_ranks(root, s);
    };
  }
  recorder_ = store::Recorder::start(std::move(*sampler), *writer_, std::move(ro));
  return {};
}

// On the recorder's thread: a log for each rank the gate lets in, and each one's interval closed
// with the sample.
void RecordSession::follow_ranks(const host::Root& root, const monitor::Sample& s) {
  std::vector<pid_t> ranks;
  for (const auto& p : s.processes)
    if (p.role == monitor::Role::kRank && p.state != 'Z') ranks.push_back(p.pid);
  const auto every = store::RankStackGate::interval_ns(setup_.python_interval_ns, ranks.size());
  for (const pid_t r : rank_gate_.to_attach(ranks, rank_python_.size())) {
    auto log = store::PythonStackLog::start(root, r, every);
    if (log)
      rank_python_.emplace(r, std::move(*log));
    else if (!pystack::not_python(log.error()))
      notice(fmt::format("no Python stacks of rank pid {}: {}", r, log.error().message()));
  }
  for (auto& [pid, log] : rank_python_) (void)log->close_interval(s.wall_ns);
}

std::optional<store::RecorderStats> RecordSession::stats() const {
  if (!recorder_) return std::nullopt;
  return recorder_->stats();
}

bool RecordSession::finish(const host::Root& root, std::optional<int> exit_status, bool quiet) {
  if (recorder_) recorder_->stop();
  bool ok = true;
  if (python_) {
    python_->stop();
    if (auto w = writer_->put_document("python_stacks", python_->snapshot().to_json()); !w)
      ok = false;
  }
  for (auto& [pid, log] : rank_python_) {
    log->stop();
    if (auto w = writer_->put_document(store::rank_stacks_key(pid), log->snapshot().to_json()); !w)
      ok = false;
  }
  if (!rank_python_.empty()) {
    // Which ranks' documents there are, for a reader (documents are looked up by key).
    nlohmann::json pids = nlohmann::json::array();
    for (const auto& [pid, log] : rank_python_) pids.push_back(pid);
    if (auto w = writer_->put_document(store::kRankStacksList, pids); !w) ok = false;
  }
  const auto stats = this->stats();
  if (stats && stats->error) {
    notice("recording stopped early: " + stats->error->message());
    ok = false;
  }
  // The facts that `report` shows at the top and `profile` reasons with.
  auto checked = audit::check_host(root, {"training", {}, setup_.collect, {}});
  const auto facts = checked ? std::move(checked->facts) : inventory::collect(root, setup_.collect);
  if (auto w = writer_->put_document("env", inventory::to_json(facts)); !w) ok = false;
  if (checked)
    if (auto w = writer_->put_document("check", audit::to_json(checked->report, facts)); !w)
      ok = false;
  for (const auto& [key, doc] : documents_)
    if (auto w = writer_->put_document(key, doc); !w) ok = false;
  if (auto done = writer_->finish(exit_status); !done) {
    notice(done.error().message());
    return false;
  }
  if (!quiet && stats) {
    struct stat st {};
    const auto size = ::stat(setup_.path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0;
    const double per_sample_ms =
        stats->samples > 0 ? stats->thread_cpu_seconds * 1e3 / double(stats->samples) : 0;
    notice(fmt::format(
        "{} samples ({} late) in {} ({}B); sampling and writing cost {:.2f} ms of CPU per sample "
        "({:.2f}% of one CPU at this interval)",
        writer_->samples_written(), stats->late, setup_.path, monitor::compact_bytes(size),
        per_sample_ms, per_sample_ms * 1e6 / double(setup_.interval_ns) * 100));
  }
  return ok;
}

void wait_for_end(const RecordSession& session, const sigset_t& stop_set) {
  // Asleep until a signal or the recorder's end, not awake every so often to ask: a signalfd of
  // the stop signals (blocked here) and the recorder's done_fd in one poll.
  const int sig = ::signalfd(-1, &stop_set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig >= 0 && session.done_fd() >= 0) {
    pollfd fds[2] = {{sig, POLLIN, 0}, {session.done_fd(), POLLIN, 0}};
    while (!session.finished()) {
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo info{};
        [[maybe_unused]] const auto n = ::read(sig, &info, sizeof info);
        break;
      }
    }
    ::close(sig);
    return;
  }
  if (sig >= 0) ::close(sig);
  const timespec tick{0, 200'000'000};
  while (!session.finished())
    if (::sigtimedwait(&stop_set, nullptr, &tick) > 0) return;
}

void RecordSession::discard(const host::Root& root) {
  (void)finish(root, std::nullopt, true);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    ::unlink((setup_.path + suffix).c_str());
}

Result<bool> record_until_stopped(RecordSession& session, const host::Root& root,
                                  const monitor::SamplerOptions& options, bool quiet,
                                  const std::function<void()>& started) {
  // The recorder's thread, started below, inherits the block: the signals come here.
  sigset_t stop_set, old;
  ::sigemptyset(&stop_set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop_set, s);
  ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);
  if (auto ok = session.start(root, options); !ok) {
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    session.discard(root);
    return tl::unexpected(ok.error());
  }
  if (started) started();
  wait_for_end(session, stop_set);
  const bool done = session.finish(root, std::nullopt, quiet);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return done;
}

Result<launch::SpawnResult> record_job(RecordSession& session, const host::Root& root,
                                       const launch::SpawnRequest& job,
                                       const monitor::SamplerOptions& options) {
  launch::SpawnRequest req = job;
  req.on_start = [&](pid_t pid) {
    auto o = options;
    o.scope = monitor::Scope{monitor::Scope::Kind::kTree, pid, {}};
    if (auto ok = session.start(root, o); !ok)
      session.notice("could not sample the job: " + ok.error().message());
    if (job.on_start) job.on_start(pid);
  };
  auto result = launch::spawn_and_wait(req);
  if (result) add_output_events(session, result->output_events);
  return result;
}

void add_output_events(RecordSession& session, const std::vector<launch::OutputEvent>& events) {
  if (events.empty()) return;
  auto doc = nlohmann::json::array();
  for (const auto& e : events) {
    auto j = launch::to_json(e);
    j["source"] = store::kJobOutputSource;
    j["severity"] = "critical";
    doc.push_back(nlohmann::json(std::move(j)));
  }
  session.add_document("events", std::move(doc));
}

}  // namespace dltune::record
