#pragma once
// A real one-node Slurm cluster of the test's own (Slurm 22.05, Debian's slurmctld, slurmd and
// munge), as root: a munge key and munged as the munge user, a slurm.conf naming this host with
// free ports and spool and state directories in a temporary directory, the cgroup plugins that
// real clusters run (proctrack/cgroup, task/cgroup with task/affinity), and the lines of
// deploy/slurm/slurm.conf.example with their programs copied into the directory and pointed at
// this build's dltune. Stopped by pid; the temporary directory and the job cgroups Slurm made
// are removed. docs/testing.md, "A real Slurm".
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/run.hpp"

namespace dltune::testing {

class SlurmCluster {
 public:
  // What the cluster's programs run as dltune (the build's binary) and any lines added to
  // slurm.conf after the example's (a test's own HealthCheckInterval, say).
  struct Options {
    std::string dltune;
    std::vector<std::string> extra_lines;
    std::map<std::string, std::string> example_values;  // "HealthCheckInterval" -> "5"
    // Added to the dltune command line of the copied programs ("--only shm.size"): what a
    // test judges, so that the rest of the host's state cannot drain its node.
    std::string program_args;
    // The same for one program only, by its file name ("dltune-epilog"); these replace
    // program_args for it. The Prolog and Epilog always get the cluster's own directories
    // (state_dir(), report_dir(), textfile()) besides.
    std::map<std::string, std::string> program_args_for;
    // gres/gpu devices the node has (Gres=gpu:N): character devices of the test's own,
    // DIR/dev/nvidiaI with NVIDIA's major 195 and minor I, named one per line in gres.conf.
    // No device is ever opened: a job given them has SLURM_JOB_GPUS as on a GPU node.
    int gpus = 0;
  };

  // Why a cluster cannot start here (not root, Slurm not installed), or empty.
  static std::string unavailable() {
    if (::geteuid() != 0) return "a Slurm cluster needs root";
    for (const char* p : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged",
                          "/usr/bin/scontrol", "/usr/bin/sinfo"})
      if (::access(p, X_OK) != 0)
        return std::string(p) + " is missing (scripts/install-deps installs Slurm)";
    if (::getpwnam("munge") == nullptr) return "no munge user (Debian's munge package makes it)";
    return {};
  }

  explicit SlurmCluster(const Options& options) : options_(options) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/dltune-slurm-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    fs::permissions(dir_, fs::perms(0755));  // munged runs as munge: it must reach its files
    node_ = short_hostname();
    cgroups_before_ = slurm_cgroups();
    if (!start_munge() || !write_config() || !start_daemons() || !wait_idle()) return;
  }
  ~SlurmCluster() { stop(); }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // Empty when the cluster is up with its node idle; else what went wrong, with the logs' tails.
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const std::string& node() const { return node_; }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] std::string conf() const { return dir_ + "/slurm.conf"; }
  // Where this cluster's Prolog watchers keep their state and its Epilog writes job reports.
  [[nodiscard]] std::string state_dir() const { return dir_ + "/dltune-run"; }
  [[nodiscard]] std::string report_dir() const { return dir_ + "/dltune-jobs"; }
  [[nodiscard]] std::string textfile() const { return dir_ + "/dltune-jobs.prom"; }
  [[nodiscard]] std::map<std::string, std::string> env() const { return {{"SLURM_CONF", conf()}}; }
  // The roots of the job cgroups Slurm makes on cgroup v1 (/sys/fs/cgroup/CONTROLLER/slurm*).
  static std::set<std::string> cgroup_roots() { return slurm_cgroups(); }

  // A Slurm client command (scontrol, sinfo, srun, sbatch, ...) against this cluster.
  RunResult slurm(std::vector<std::string> argv, int timeout_seconds = 60) const {
    return run(argv, env(), timeout_seconds);
  }
  // "drained|dltune: ..." : the node's state and reason as sinfo prints them.
  [[nodiscard]] std::string state_and_reason() const {
    auto r = slurm({"sinfo", "-h", "-N", "-n", node_, "-o", "%T|%E"});
    std::string s = r.out.substr(0, r.out.find('\n'));
    return s;
  }
  // Polls state_and_reason() until `wanted` says yes or `seconds` pass; the last answer.
  std::string wait_for(const std::function<bool(const std::string&)>& wanted, int seconds) const {
    std::string now;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    do {
      now = state_and_reason();
      if (wanted(now)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    } while (std::chrono::steady_clock::now() < end);
    return now;
  }
  [[nodiscard]] std::string logs() const {
    std::string out;
    for (const char* f : {"slurmctld.log", "slurmd.log", "munge/log"}) {
      std::ifstream in(dir_ + "/" + f);
      std::stringstream s;
      s << in.rdbuf();
      std::string text = s.str();
      if (text.size() > 3000) text = text.substr(text.size() - 3000);
      out += std::string("--- ") + f + " ---\n" + text;
    }
    return out;
  }

 private:
  static std::string short_hostname() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    std::string s = name;
    return s.substr(0, s.find('.'));
  }
  // The job cgroups Slurm makes on cgroup v1 (/sys/fs/cgroup/CONTROLLER/slurm*), to remove the
  // ones this cluster made.
  static std::set<std::string> slurm_cgroups() {
    namespace fs = std::filesystem;
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& c : fs::directory_iterator("/sys/fs/cgroup", ec))
      for (const auto& g : fs::directory_iterator(c.path(), ec))
        if (g.is_directory() && g.path().filename().string().rfind("slurm", 0) == 0)
          out.insert(g.path().string());
    return out;
  }
  // Every process in the groups at and below `p`; true when there was one.
  static bool kill_cgroup_tree(const std::filesystem::path& p) {
    namespace fs = std::filesystem;
    bool any = false;
    std::ifstream procs(p / "cgroup.procs");
    for (long pid = 0; procs >> pid;)
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) any = true;
    std::error_code ec;
    for (const auto& sub : fs::directory_iterator(p, ec))
      if (sub.is_directory() && kill_cgroup_tree(sub.path())) any = true;
    return any;
  }
  static void remove_cgroup_tree(const std::filesystem::path& p) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& sub : fs::directory_iterator(p, ec))
      if (sub.is_directory()) remove_cgroup_tree(sub.path());
    ::rmdir(p.c_str());
  }
  bool fail_with(const std::string& what) {
    error_ = what + "\n" + logs();
    return false;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void put(const std::string& path, const std::string& text, unsigned mode = 0644) {
    { std::ofstream(path) << text; }
    ::chmod(path.c_str(), mode);
  }

  bool start_munge() {
    namespace fs = std::filesystem;
    const std::string m = dir_ + "/munge";
    fs::create_directory(m);
    std::string key(1024, '\0');
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      random.read(key.data(), static_cast<std::streamsize>(key.size()));
    }
    put(m + "/key", key, 0400);
    const passwd* pw = ::getpwnam("munge");
    for (const auto& p : {m, m + "/key"})
      if (::chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) return fail_with("chown " + p);
    ::chmod(m.c_str(), 0700);
    const auto r =
        run({"setpriv", "--reuid=munge", "--regid=munge", "--init-groups", "/usr/sbin/munged",
             "--socket=" + m + "/sock", "--key-file=" + m + "/key", "--pid-file=" + m + "/pid",
             "--log-file=" + m + "/log", "--seed-file=" + m + "/seed", "--force"});
    if (r.exit_code != 0) return fail_with("munged: " + r.err);
    return true;
  }

  // A program the example names: a script of deploy/slurm (copied), else one dltune builds (the
  // build's, beside its dltune).
  std::string program(const std::string& installed_path) {
    namespace fs = std::filesystem;
    const std::string name = fs::path(installed_path).filename();
    if (fs::exists(std::string(DLTUNE_SOURCE_DIR) + "/deploy/slurm/" + name))
      return copy_program(installed_path);
    return (fs::path(options_.dltune).parent_path() / name).string();
  }
  // A copy of a deploy/slurm program with /usr/bin/dltune replaced by this build's, and
  // SLURM_CONF set for this cluster (slurmd gives its programs no SLURM_CONF).
  std::string copy_program(const std::string& installed_path) {
    namespace fs = std::filesystem;
    const std::string name = fs::path(installed_path).filename();
    std::string text = slurp(std::string(DLTUNE_SOURCE_DIR) + "/deploy/slurm/" + name);
    for (std::size_t at; (at = text.find("/usr/bin/dltune")) != std::string::npos;)
      text.replace(at, 15, options_.dltune);
    std::string args = options_.program_args;
    if (auto it = options_.program_args_for.find(name); it != options_.program_args_for.end())
      args = it->second;
    if (name == "dltune-prolog") args += " --state-dir " + state_dir();
    if (name == "dltune-epilog")
      args += " --state-dir " + state_dir() + " --report-dir " + report_dir() + " --textfile " +
              textfile();
    if (!args.empty()) {
      std::string lines, line;
      std::istringstream in(text);
      while (std::getline(in, line)) {
        if (line.rfind("exec " + options_.dltune, 0) == 0 ||
            line.rfind(options_.dltune + " ", 0) == 0)
          line += " " + args;
        lines += line + "\n";
      }
      text = lines;
    }
    const auto first_line_end = text.find('\n') + 1;
    text.insert(first_line_end, "SLURM_CONF=" + conf() + "\nexport SLURM_CONF\n");
    const std::string copy = dir_ + "/" + name;
    put(copy, text, 0755);
    return copy;
  }

  // The ports the cluster listens on, as slurm.conf lines. Above the kernel's ephemeral range
  // (net.ipv4.ip_local_port_range) where there is room: no client socket (a DDP job's gloo
  // connection, a test's Prometheus) is ever given one of them, so a Slurm message that comes
  // late (a step's I/O to an srun that has gone, a controller's ping of a node that stopped)
  // can only reach a Slurm program. The controller, the node daemon and SrunPortRange (srun's
  // listening ports, 100 of them) each start at a port nothing is bound to now, from an offset
  // drawn at random, so that a cluster that is still stopping keeps its own. Where the range
  // reaches the top, the controller and node daemon take free ports inside it, as before.
  static std::string ports_lines() {
    int low = 32768, high = 60999;
    {
      std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
      in >> low >> high;
    }
    constexpr int kSrunPorts = 100;
    const int first = high + 1, room = 65535 - first + 1;
    if (room < kSrunPorts + 50)
      return "SlurmctldPort=" + std::to_string(free_port()) +
             "\nSlurmdPort=" + std::to_string(free_port()) + "\n";
    auto unbound = [](int port) {
      const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<uint16_t>(port));
      const bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(s);
      return ok;
    };
    // Two single ports in the first 50 of the room, srun's range in the rest.
    const int offset = static_cast<int>(::getpid() + ::time(nullptr)) % 50;
    std::vector<int> picked;
    for (int i = 0; i < 50 && picked.size() < 2; ++i) {
      const int port = first + (offset + i) % 50;
      if (unbound(port)) picked.push_back(port);
    }
    if (picked.size() < 2)
      return "SlurmctldPort=" + std::to_string(free_port()) +
             "\nSlurmdPort=" + std::to_string(free_port()) + "\n";
    const int srun_first = first + 50 + (offset * 7) % std::max(1, room - 50 - kSrunPorts + 1);
    return "SlurmctldPort=" + std::to_string(picked[0]) +
           "\nSlurmdPort=" + std::to_string(picked[1]) +
           "\nSrunPortRange=" + std::to_string(srun_first) + "-" +
           std::to_string(srun_first + kSrunPorts - 1) + "\n";
  }

  bool write_config() {
    namespace fs = std::filesystem;
    fs::create_directory(dir_ + "/state");
    fs::create_directory(dir_ + "/spool");
    long mem_kib = 0;
    {
      std::ifstream in("/proc/meminfo");
      std::string key;
      in >> key >> mem_kib;
    }
    const unsigned cpus = std::thread::hardware_concurrency();
    std::ostringstream c;
    c << "ClusterName=dltune-test\nSlurmctldHost=" << node_ << "\nSlurmUser=root\n"
      << "AuthType=auth/munge\nAuthInfo=socket=" << dir_ << "/munge/sock\n"
      << ports_lines() << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_
      << "/spool\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_
      << "/slurmd.pid\nSlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_
      << "/slurmd.log\n"
      << "ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup,task/affinity\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n"
      << "ReturnToService=2\nMpiDefault=none\nJobAcctGatherType=jobacct_gather/cgroup\n"
      << (options_.gpus > 0 ? "GresTypes=gpu\n" : "") << "NodeName=" << node_ << " CPUs=" << cpus
      << " RealMemory=" << (mem_kib / 1024 - 1024)
      << (options_.gpus > 0 ? " Gres=gpu:" + std::to_string(options_.gpus) : "")
      << " State=UNKNOWN\n"
      << "PartitionName=debug Nodes=" << node_ << " Default=YES MaxTime=INFINITE State=UP\n";
    // deploy/slurm/slurm.conf.example, as an admin adds it: its programs copied here.
    std::ifstream example(std::string(DLTUNE_SOURCE_DIR) + "/deploy/slurm/slurm.conf.example");
    for (std::string line; std::getline(example, line);) {
      if (line.empty() || line[0] == '#') continue;
      const auto eq = line.find('=');
      std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (auto it = options_.example_values.find(key); it != options_.example_values.end())
        value = it->second;
      else if (!value.empty() && value[0] == '/')
        value = program(value);
      c << key << "=" << value << "\n";
    }
    for (const auto& l : options_.extra_lines) c << l << "\n";
    put(conf(), c.str());
    if (options_.gpus > 0) {
      fs::create_directory(dir_ + "/dev");
      std::string gres;
      for (int i = 0; i < options_.gpus; ++i) {
        const std::string dev = dir_ + "/dev/nvidia" + std::to_string(i);
        if (::mknod(dev.c_str(), S_IFCHR | 0600, ::makedev(195, static_cast<unsigned>(i))) != 0)
          return fail_with("mknod " + dev + ": " + std::strerror(errno));
        gres += "NodeName=" + node_ + " Name=gpu File=" + dev + "\n";
      }
      put(dir_ + "/gres.conf", gres);
    }
    put(dir_ + "/cgroup.conf",
        "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores=yes\n"
        "ConstrainRAMSpace=yes\nConstrainSwapSpace=yes\n");
    return true;
  }

  bool start_daemons() {
    for (const char* d : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd"}) {
      const auto r = run({d, "-f", conf()}, env());
      if (r.exit_code != 0) return fail_with(std::string(d) + ": " + r.err);
    }
    return true;
  }

  bool wait_idle() {
    // The node registers within seconds (STACK-NOTES: up to ~10 s): until then it is unknown.
    const auto s = wait_for([](const std::string& s) { return s.rfind("idle", 0) == 0; }, 40);
    if (s.rfind("idle", 0) != 0) return fail_with("the node did not become idle: " + s);
    return true;
  }

  static pid_t pid_in(const std::string& file) {
    std::ifstream in(file);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }
  static void stop_pid(pid_t pid) {
    if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return;
    for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(pid, SIGKILL);
  }
  void stop() {
    namespace fs = std::filesystem;
    if (dir_.empty()) return;
    // Jobs first, waited for (scancel only asks), so that slurmstepd ends them and removes
    // their cgroups; then the daemons, by their pid files. A job's slurmstepd outlives slurmd:
    // whatever is still in this cluster's cgroups after that is killed, then the groups go.
    // Only while the controller lives: against a dead one each client call waits out its
    // timeout (a test stops it on purpose).
    const pid_t ctld = pid_in(dir_ + "/slurmctld.pid");
    const bool controller = ctld > 0 && ::kill(ctld, 0) == 0;
    if (controller) (void)run({"scancel", "--full", "--partition=debug"}, env(), 10);
    for (int i = 0; controller && i < 60; ++i) {
      const auto q = run({"squeue", "-h", "-o", "%i"}, env(), 10);
      if (q.exit_code != 0 || q.out.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    stop_pid(pid_in(dir_ + "/slurmd.pid"));
    stop_pid(pid_in(dir_ + "/slurmctld.pid"));
    stop_pid(pid_in(dir_ + "/munge/pid"));
    kill_watchers();
    for (const auto& g : slurm_cgroups()) {
      if (cgroups_before_.count(g)) continue;
      for (int i = 0; i < 50 && kill_cgroup_tree(g); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      remove_cgroup_tree(g);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }

  // The Prolog's job watchers that no Epilog stopped (a job the cluster's stop cut short).
  void kill_watchers() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& p : fs::directory_iterator("/proc", ec)) {
      const std::string pid = p.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string cmdline = slurp(p.path() / "cmdline");
      for (auto& c : cmdline)
        if (c == '\0') c = ' ';
      if (cmdline.find(" slurm watch ") != std::string::npos &&
          cmdline.find(state_dir()) != std::string::npos)
        ::kill(std::stoi(pid), SIGKILL);
    }
  }

  Options options_;
  std::string dir_, node_, error_;
  std::set<std::string> cgroups_before_;
};

}  // namespace dltune::testing
