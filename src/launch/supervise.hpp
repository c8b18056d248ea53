#pragma once
// The parent's half of spawn_and_wait (internal to launch/): owning descriptors, the job's
// process (killed and reaped on every early return), the signals dltune passes on, and the loop
// that copies the job's output through while it runs.
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "launch/output_watch.hpp"
#include "launch/progress.hpp"

namespace dltune::launch {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  void reset();

 private:
  int fd_ = -1;
};

struct Ended {
  int status = 0;  // as waitpid reports it
  rusage usage{};
};

// The started child. Unless it has been waited for, the destructor kills it (SIGKILL) and reaps
// it: an error after fork leaves neither a process nor a zombie.
class Job {
 public:
  explicit Job(pid_t pid) : pid_(pid) {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job();
  [[nodiscard]] pid_t pid() const { return pid_; }
  // Waits for it (blocking); for a child that is about to exit.
  void reap();
  // wait4 without blocking: the end, nullopt while it runs, an error when it cannot be waited.
  [[nodiscard]] Result<std::optional<Ended>> try_wait();

 private:
  pid_t pid_;
  bool reaped_ = false;
};

// SIGINT, SIGTERM, SIGHUP and SIGQUIT (and SIGPIPE, so that a closed stdout gives EPIPE rather
// than killing dltune) blocked in the calling thread and read through a signalfd. The destructor
// discards what is still pending and restores the mask and SIGCHLD's disposition.
class ForwardedSignals {
 public:
  [[nodiscard]] static Result<std::unique_ptr<ForwardedSignals>> block();
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;
  ~ForwardedSignals();
  [[nodiscard]] int fd() const { return fd_.get(); }
  // Passes pending signals on to each of `jobs`, returns those passed. Not passed: those the
  // kernel generated (a terminal's ^C, ^\ or hang-up: the jobs are in dltune's process group and
  // got them as well; sudo(8) does the same) and those one of the jobs sent.
  std::vector<int> forward_to(const std::vector<pid_t>& jobs);
  // Reads what is still pending without passing it on; afterwards, every signal received
  // (passed on or not) since block(), in order.
  [[nodiscard]] std::vector<int> received();

 private:
  ForwardedSignals() = default;
  void note(int sig);
  std::vector<int> received_;
  Fd fd_;
  sigset_t old_mask_{};
  std::optional<struct sigaction> old_sigchld_;
};

// How a group of jobs (the ranks of `run --nproc N`) ended.
struct GroupEnd {
  std::vector<Ended> ends;                   // per job, in the order given
  std::vector<double> seconds;               // each one's life from the start of run_all()
  std::vector<bool> stopped;                 // ended after dltune stopped it (SIGTERM, SIGKILL)
  std::optional<std::size_t> first_failure;  // the first to exit non-zero or by a signal
  std::vector<int> forwarded;                // the signals passed on (to every job running)
};

class Supervision {
 public:
  Supervision(std::vector<Job*> jobs, ForwardedSignals& signals, ProgressMeter& meter,
              OutputWatch& watch)
      : jobs_(std::move(jobs)), signals_(signals), meter_(meter), watch_(watch) {}
  // The job's output arriving on `from`, copied to dltune's descriptor `to`; `metered`: read for
  // progress rates too (channel: the order of the metered streams). Every stream is read for
  // GPU errors (the watch), labelled with `rank` when the group has several.
  void add_stream(Fd from, int to, bool metered = true, std::optional<int> rank = std::nullopt);
  // When a job fails (exits non-zero or is killed by a signal) while others run, as torchrun's
  // agent does: SIGTERM to the others, SIGKILL to those left after `grace`.
  void stop_others_on_failure(std::chrono::milliseconds grace) { grace_ = grace; }
  // Until every job has exited; then what is left in the pipes is copied too.
  [[nodiscard]] Result<GroupEnd> run_all();

 private:
  struct Stream {
    Fd from;
    int to = -1;
    bool passing = true;  // false once `to` refused (EPIPE): the rest is read and dropped
    std::optional<std::size_t> channel;  // the meter's, when metered
    std::size_t watch_channel = 0;       // the watch's: the stream's place
    std::optional<int> rank;
  };
  bool pump(Stream& stream);  // false at end of file
  void drain(Stream& stream);

  std::vector<Job*> jobs_;
  ForwardedSignals& signals_;
  ProgressMeter& meter_;
  OutputWatch& watch_;
  std::vector<Stream> streams_;
  std::size_t metered_ = 0;
  std::optional<std::chrono::milliseconds> grace_;
};

}  // namespace dltune::launch
