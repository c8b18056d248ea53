// `dltune serve` live, on loopback, against the fake libnvidia-ml.so: promtool checks a real
// scrape, a real Prometheus server scrapes serve and its query API returns the right values, a
// job cgroup made for the test appears, hostile clients (silent, slow, a 10 MB body, a 100 KB
// URI) take neither threads nor memory and are done with, then /healthz, 404, 405 and SIGTERM;
// then the limits of one connection at their edges.
// One serve process for all of it: Prometheus's first scrape comes only after about 5.5 s
// (its scrape manager applies new targets on a 5 s tick), and that is most of the test's time.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unit/gpu/fake_nvml_config.hpp"
#include "../unit/serve/exposition_parser.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/prometheus.hpp"

namespace serve_live_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

using dltune::testing::free_port;
using dltune::testing::Process;

// A TCP connection to 127.0.0.1:port, from `from` (another loopback address: another client);
// non-blocking ones do not wait for the handshake.
int connect_to(int port, bool nonblocking, std::chrono::seconds timeout = 5s,
               const char* from = nullptr) {
  const int s =
      ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (from != nullptr) {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    ::bind(s, reinterpret_cast<sockaddr*>(&src), sizeof src);
  }
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  return s;
}

// Sends `request` (as much as goes), then reads the answer's status line; "" when there was none.
std::string send_raw(int port, const std::string& request) {
  const int s = connect_to(port, false, 15s);
  std::size_t sent = 0;
  while (sent < request.size()) {
    const auto n = ::send(s, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string answer;
  char buf[4096];
  for (;;) {
    const auto n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
    if (answer.find("\r\n") != std::string::npos) break;
  }
  ::close(s);
  return answer.substr(0, answer.find("\r\n"));
}

struct ProcStatus {
  long threads = -1, rss_kib = -1;
};
ProcStatus proc_status(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  ProcStatus s;
  std::string key;
  long value = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), "Threads: %ld", &value) == 1) s.threads = value;
    if (std::sscanf(line.c_str(), "VmRSS: %ld", &value) == 1) s.rss_kib = value;
  }
  return s;
}

std::uint64_t mem_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemTotal: %llu kB", &kib) == 1) return kib * 1024;
  }
  return 0;
}

// The job groups the test makes: in the memory hierarchy on v1 (as `run` does), in the unified
// tree on v2.
struct TestCgroups {
  std::vector<fs::path> made;
  std::string job, named;  // as /proc/PID/cgroup names them
  bool ok = false;
  TestCgroups() {
    fs::path base;
    if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") ||
        fs::exists("/sys/fs/cgroup/memory/cgroup.procs"))
      base = "/sys/fs/cgroup/memory";
    else if (fs::exists("/sys/fs/cgroup/cgroup.controllers"))
      base = "/sys/fs/cgroup";
    else
      return;
    job = fmt::format("/dltune/serve-test-{}", ::getpid());
    named = fmt::format("/serve-test-named-{}", ::getpid());
    std::error_code ec;
    if (!fs::exists(base / "dltune")) {
      if (!fs::create_directory(base / "dltune", ec)) return;
      made.push_back(base / "dltune");
    }
    for (const auto& g : {job, named}) {
      if (!fs::create_directory(base / g.substr(1), ec)) return;
      made.push_back(base / g.substr(1));
    }
    // A limit to read back: 256 MiB.
    const auto limit = base.filename() == "memory" ? "memory.limit_in_bytes" : "memory.max";
    std::ofstream(base / job.substr(1) / limit) << "268435456";
    ok = true;
  }
  ~TestCgroups() {
    for (auto it = made.rbegin(); it != made.rend(); ++it) ::rmdir(it->c_str());
  }
};

class ServeLive : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / fmt::format("serve_live_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ServeLive, PrometheusPromtoolHostileClientsAndHealth) {
  if (::geteuid() != 0) GTEST_SKIP() << "the test makes job cgroups: needs root";
  for (const char* tool : {"/usr/bin/prometheus", "/usr/bin/promtool"})
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << tool << " is missing (Debian's prometheus)";
  TestCgroups groups;
  ASSERT_TRUE(groups.ok) << "could not make the test's cgroups";

  auto config = dltune::testing::fake_hgx(2);
  config["gpus"][0]["xid_events"] = {79, 13};
  config["gpus"][0]["pcie_replay_count"] = 3;
  config["gpus"][0]["ecc_errors"]["volatile_corrected"] = 4;
  config["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 1;
  dltune::testing::FakeNvmlConfig fake(config);  // FAKE_NVML_* in this process's environment
  ::setenv("DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML, 1);
  Process serve({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--interval", "500ms",
                 "--cgroup", groups.named});
  ::unsetenv("DLTUNE_NVML_LIBRARY");
  ASSERT_GT(serve.pid, 0);
  const auto port_text = serve.wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 10s);
  ASSERT_TRUE(port_text) << serve.err_text;
  const int port = std::stoi(*port_text);

  // Prometheus first: its first scrape takes the longest.
  std::optional<dltune::testing::PrometheusServer> prometheus;
  prometheus.emplace(dir_ / "prometheus", port);
  ASSERT_TRUE(prometheus->started());

  httplib::Client http("127.0.0.1", port);
  http.set_connection_timeout(5);
  http.set_read_timeout(15);

  // (d) /healthz: ok once the first sample is published.
  {
    int status = 0;
    std::string said;
    for (int i = 0; i < 50 && status != 200; ++i) {
      if (i > 0) std::this_thread::sleep_for(100ms);
      if (auto r = http.Get("/healthz")) {
        status = r->status;
        said = r->body;
      }
    }
    EXPECT_EQ(status, 200);
    EXPECT_EQ(said, "ok\n");
  }

  // (a) a real scrape: promtool is content, the values are this host's and the fake GPUs'.
  // NVML is read every second and Xid events are drained at its next reading: wait for them.
  std::string body;
  dltune::serve::testing::Exposition e;
  const auto g0 =
      dltune::serve::testing::gpu_labels(0, config["gpus"][0]["uuid"], config["gpus"][0]["name"],
                                         dltune::serve::testing::this_hostname());
  for (int i = 0; i < 40; ++i) {
    auto r = http.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    body = r->body;
    e = dltune::serve::testing::parse_exposition(body);
    const auto* xid = e.find("dltune_gpu_xid_errors_total", g0);
    if (xid && xid->value_text == "2" && e.find("dltune_check_up") &&
        e.find("dltune_job_memory_limit_bytes", {{"cgroup", groups.job}}))
      break;
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  {
    const auto file = dir_ / "scrape.txt";
    std::ofstream(file) << body;
    Process promtool({"/usr/bin/promtool", "check", "metrics"}, file.string());
    const int rc = promtool.wait_exit(20s);
    // Well formed; its only lint is the camelCase of dcgm-exporter's own label names, which the
    // GPU series carry on purpose (docs/metrics.md: joins with DCGM's series).
    const auto lint = promtool.rest_of_stderr();
    std::istringstream lines(lint);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      EXPECT_NE(line.find("label names should be written in 'snake_case' not 'camelCase'"),
                std::string::npos)
          << line;
    }
    EXPECT_TRUE(rc == 0 || (rc == 3 && !lint.empty())) << rc << "\n" << lint;
  }
  auto value = [&](const std::string& name, const std::map<std::string, std::string>& l = {}) {
    const auto* s = e.find(name, l);
    return s ? s->value_text : std::string("(none)");
  };
  EXPECT_EQ(value("dltune_memory_total_bytes"), std::to_string(mem_total_bytes()));
  EXPECT_EQ(value("dltune_cpus"), std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(value("dltune_nvml_up"), "1");
  EXPECT_EQ(value("dltune_gpu_memory_total_bytes", g0), "85520809984");
  EXPECT_EQ(value("dltune_gpu_xid_errors_total", g0), "2");
  EXPECT_EQ(value("dltune_gpu_last_xid", g0), "13");
  EXPECT_EQ(value("dltune_gpu_pcie_replays_total", g0), "3");
  for (const auto& [type, count] :
       std::map<std::string, std::string>{{"corrected", "4"}, {"uncorrected", "1"}}) {
    auto l = g0;
    l["type"] = type;
    EXPECT_EQ(value("dltune_gpu_ecc_errors_total", l), count) << type;
  }
  EXPECT_EQ(value("dltune_job_memory_limit_bytes", {{"cgroup", groups.job}}), "268435456");
  EXPECT_NE(value("dltune_job_memory_bytes", {{"cgroup", groups.named}}), "(none)")
      << "the group named with --cgroup";
  EXPECT_EQ(value("dltune_check_up"), "1");
  EXPECT_EQ(e.all("dltune_check_findings").size(), 4u);

  // (b) Prometheus scraped serve: its query API has the same values.
  const auto mem = prometheus->wait_for("dltune_memory_total_bytes", 20s);
  ASSERT_TRUE(mem) << "Prometheus has no dltune metric after 20 s\n" << prometheus->log();
  auto query = [&](const std::string& q) { return prometheus->query(q); };
  EXPECT_EQ(*mem, std::to_string(mem_total_bytes()));
  EXPECT_EQ(query("dltune_cpus").value_or(""), std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(query("dltune_gpu_memory_total_bytes{gpu=\"0\"}").value_or(""), "85520809984");
  EXPECT_EQ(
      query(fmt::format("dltune_job_memory_limit_bytes{{cgroup=\"{}\"}}", groups.job)).value_or(""),
      "268435456");
  EXPECT_EQ(query("up{job=\"dltune\"}").value_or(""), "1");
  prometheus.reset();  // done with it: killed and reaped now

  // (c) hostile clients: 200 connections from another address (127.0.0.2) that send nothing or
  // a header without end, a 10 MB body, a 100 KB URI. Threads and memory stay where they were,
  // and the other address's scrape is answered meanwhile: the slow address holds half the
  // workers at most (the rest of its connections are told 503 at once), each for the 2 s its
  // headers may take.
  const auto before = proc_status(serve.pid);
  ASSERT_GT(before.threads, 0);
  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) slow.push_back(connect_to(port, true, 5s, "127.0.0.2"));
  std::this_thread::sleep_for(200ms);  // the handshakes the backlog takes
  for (std::size_t i = 1; i < slow.size(); i += 2) {
    const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: aaaa";
    (void)::send(slow[i], partial.data(), partial.size(), MSG_NOSIGNAL);
  }
  std::string big_body_status, long_uri_status;
  std::thread big_body([&] {
    const std::string body(10 << 20, 'x');
    big_body_status = send_raw(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                         std::to_string(body.size()) + "\r\n\r\n" + body);
  });
  std::thread long_uri([&] {
    long_uri_status =
        send_raw(port, "GET /" + std::string(100 << 10, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  });
  std::this_thread::sleep_for(1500ms);
  {
    httplib::Client scraper("127.0.0.1", port);
    scraper.set_connection_timeout(1s);
    scraper.set_read_timeout(1s);
    const auto start = std::chrono::steady_clock::now();
    auto r = scraper.Get("/metrics");
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    ASSERT_TRUE(r) << "a scrape while 200 slow connections are open: "
                   << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    std::printf("a scrape beside 200 slow connections from another address: %lld ms\n",
                static_cast<long long>(took.count()));
    // The slow address's connections beyond its share were told 503 and closed (how many got
    // through the listen backlog by now is the kernel's: at least one was refused).
    std::size_t refused = 0;
    for (const int s : slow) {
      char buf[64];
      const auto n = ::recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
      if (n > 0 && std::string(buf, static_cast<std::size_t>(n)).starts_with("HTTP/1.1 503"))
        ++refused;
    }
    EXPECT_GE(refused, 1u) << "over its share, an address is answered 503 at once";
  }
  const auto during = proc_status(serve.pid);
  EXPECT_LE(during.threads, before.threads + 1) << "a fixed pool: no thread per connection";
  EXPECT_LT(during.rss_kib, before.rss_kib + 32 * 1024) << "no request is held in memory";
  for (const int s : slow) ::close(s);
  big_body.join();
  long_uri.join();
  // The body is refused unread (413: no endpoint takes one) or the connection reset while it
  // was still being sent.
  EXPECT_TRUE(big_body_status.empty() || big_body_status == "HTTP/1.1 413 Content Too Large")
      << big_body_status;
  EXPECT_EQ(long_uri_status, "HTTP/1.1 414 URI Too Long");
  const auto after = proc_status(serve.pid);
  EXPECT_LE(after.threads, before.threads + 1);
  EXPECT_LT(after.rss_kib, before.rss_kib + 32 * 1024);
  {
    auto r = http.Get("/metrics");
    ASSERT_TRUE(r) << "a normal scrape after the hostile clients: "
                   << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(dltune::serve::testing::parse_exposition(r->body).errors.empty());
  }

  // Read-only: other methods 405, other paths 404; the index links both endpoints.
  {
    auto r = http.Post("/metrics", "x=1", "application/x-www-form-urlencoded");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
    httplib::Client fresh("127.0.0.1", port);  // the 405 closed the last connection
    r = fresh.Delete("/metrics");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    httplib::Client again("127.0.0.1", port);
    r = again.Get("/metrics/../etc/passwd");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    r = again.Get("/");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("href=\"metrics\""), std::string::npos);
    r = again.Get("/healthz");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }

  // SIGTERM: a clean stop, exit 0.
  ::kill(serve.pid, SIGTERM);
  EXPECT_EQ(serve.wait_exit(15s), 0) << serve.err_text;
}

}  // namespace

// The limits on one connection, at the edges: the request's size (16 KiB of line and headers),
// the deadline of headers sent a line at a time (2 s from the first byte), the idle timeout of a
// silent connection, and a kept-alive connection's 100 requests, pipelined ones answered in
// order and HEAD without a body.
namespace {

// Reads from `s` until `count` answers (status lines) have come, the end, or the timeout.
std::string read_answers(int s, std::size_t count) {
  std::string got;
  char buf[8192];
  for (;;) {
    std::size_t answers = 0;
    for (auto at = got.find("HTTP/1.1 "); at != std::string::npos;
         at = got.find("HTTP/1.1 ", at + 1))
      ++answers;
    // An answer ends with its body: /healthz's is "ok\n" (or why not), short.
    if (answers >= count && got.ends_with("\n")) return got;
    const auto n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST(ServeLimitsLive, RequestSizeDeadlinesIdleAndKeptAliveConnections) {
  Process serve({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--interval", "200ms",
                 "--no-check", "--no-gpus"});
  ASSERT_GT(serve.pid, 0);
  const auto port_text = serve.wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 10s);
  ASSERT_TRUE(port_text) << serve.err_text;
  const int port = std::stoi(*port_text);

  // Size: up to 16 KiB of request line and headers is read; more is refused, the line with 414
  // and headers with 431.
  const auto header = [](std::size_t n) { return "X-Big: " + std::string(n, 'a') + "\r\n"; };
  EXPECT_EQ(send_raw(port, "GET / HTTP/1.1\r\nHost: x\r\n" + header(15000) + "\r\n"),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(send_raw(port, "GET / HTTP/1.1\r\nHost: x\r\n" + header(17000) + "\r\n"),
            "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(send_raw(port, "GET /" + std::string(17000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 414 URI Too Long");

  // Headers a line every 250 ms never end: the connection is cut at the header deadline, 2 s
  // after the first byte, not before (the wait before it is the idle timeout's).
  {
    const int s = connect_to(port, false);
    std::this_thread::sleep_for(1s);
    const auto first = Clock::now();
    bool cut = false;
    const std::string line0 = "GET /healthz HTTP/1.1\r\n";
    ASSERT_EQ(::send(s, line0.data(), line0.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(line0.size()));
    Clock::duration took{};
    for (int i = 0; i < 40 && !cut; ++i) {
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, 250) > 0) {
        char buf[64];
        cut = ::recv(s, buf, sizeof buf, 0) <= 0;
      }
      if (!cut && ::send(s, "X: y\r\n", 6, MSG_NOSIGNAL) != 6) cut = true;
      if (cut) took = Clock::now() - first;
    }
    ::close(s);
    EXPECT_TRUE(cut) << "dripped headers still held a connection after 10 s";
    EXPECT_GE(took, 1900ms) << "cut before the header deadline";
    EXPECT_LT(took, 5s) << "cut at the header deadline (2 s), not later";
  }
  // A connection that sends nothing is closed at the idle timeout (2 s).
  {
    const int s = connect_to(port, false, 10s);
    const auto start = Clock::now();
    char buf[16];
    EXPECT_EQ(::recv(s, buf, sizeof buf, 0), 0) << "closed, without an answer";
    const auto took = Clock::now() - start;
    EXPECT_GE(took, 1900ms);
    EXPECT_LT(took, 6s);
    ::close(s);
  }
  // One connection: 100 requests one after the other, the last answered with
  // "Connection: close" and the connection ended; three pipelined ones answered in order; HEAD
  // has the headers and no body.
  {
    const int s = connect_to(port, false);
    std::string all;
    for (int i = 0; i < 100; ++i) {
      const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      ASSERT_EQ(::send(s, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()))
          << "request " << i + 1;
      const auto answer = read_answers(s, 1);
      ASSERT_TRUE(answer.starts_with("HTTP/1.1 ")) << "request " << i + 1 << ": " << answer;
      EXPECT_EQ(answer.find("Connection: close") != std::string::npos, i == 99)
          << "request " << i + 1;
    }
    char buf[16];
    EXPECT_EQ(::recv(s, buf, sizeof buf, 0), 0) << "ended after its 100th request";
    ::close(s);
  }
  {
    const int s = connect_to(port, false);
    const std::string three =
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
        "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(::send(s, three.data(), three.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(three.size()));
    std::string got;
    char buf[8192];
    const auto until = Clock::now() + 5s;
    while (Clock::now() < until && got.find("version=0.0.4") == std::string::npos) {
      const auto n = ::recv(s, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    std::this_thread::sleep_for(200ms);  // a body after HEAD's headers would have come by now
    const auto more = ::recv(s, buf, sizeof buf, MSG_DONTWAIT);
    if (more > 0) got.append(buf, static_cast<std::size_t>(more));
    ::close(s);
    const auto first = got.find("HTTP/1.1 200 OK");
    const auto second = got.find("HTTP/1.1 404 Not Found");
    const auto third = got.find("HTTP/1.1 200 OK", first + 1);
    ASSERT_NE(first, std::string::npos) << got;
    ASSERT_NE(second, std::string::npos) << got;
    ASSERT_NE(third, std::string::npos) << got;
    EXPECT_LT(first, second);
    EXPECT_LT(second, third);
    EXPECT_NE(got.find("Content-Type: text/plain; version=0.0.4", third), std::string::npos);
    EXPECT_TRUE(got.ends_with("\r\n\r\n")) << "HEAD's answer has no body: " << got.substr(third);
  }
  ::kill(serve.pid, SIGTERM);
  EXPECT_EQ(serve.wait_exit(15s), 0) << serve.err_text;
}

// Least privilege: started as root, serve binds and then becomes an unprivileged user
// before it samples or serves; --as-root keeps root; root itself or an unknown --user is refused.
namespace {
std::string uid_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Uid:", 0) == 0) return line;
  return "";
}
}  // namespace

TEST(ServePrivilegeLive, StartedAsRootItBindsThenBecomesNobody) {
  if (::geteuid() != 0) GTEST_SKIP() << "the test starts serve as root";
  Process serve({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--interval", "200ms",
                 "--no-check", "--no-gpus"});
  ASSERT_GT(serve.pid, 0);
  const auto port = serve.wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 10s);
  ASSERT_TRUE(port) << serve.err_text;
  EXPECT_NE(serve.err_text.find("now running as nobody (uid 65534)"), std::string::npos)
      << serve.err_text;
  // Real, effective, saved and file-system uid: all nobody's.
  EXPECT_EQ(uid_line(serve.pid), "Uid:\t65534\t65534\t65534\t65534");
  std::this_thread::sleep_for(500ms);  // samples taken as nobody
  httplib::Client http("127.0.0.1", std::stoi(*port));
  const auto reply = http.Get("/metrics");
  ASSERT_TRUE(reply) << httplib::to_string(reply.error());
  EXPECT_EQ(reply->status, 200);
  EXPECT_NE(reply->body.find("dltune_memory_total_bytes"), std::string::npos);

  Process kept(
      {DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--no-check", "--no-gpus", "--as-root"});
  ASSERT_TRUE(kept.wait_for(std::regex("listening on"), 10s)) << kept.err_text;
  EXPECT_EQ(uid_line(kept.pid), "Uid:\t0\t0\t0\t0");
  EXPECT_NE(kept.err_text.find("--as-root"), std::string::npos) << kept.err_text;

  for (const char* user : {"root", "no-such-user-dltune"}) {
    Process refused({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--no-check", "--no-gpus",
                     "--user", user});
    int status = 0;
    ::waitpid(refused.pid, &status, 0);
    const auto err = refused.rest_of_stderr();
    refused.pid = -1;
    EXPECT_EQ(WEXITSTATUS(status), 2) << user << ": " << err;
    EXPECT_NE(err.find(user), std::string::npos) << err;
  }
}

}  // namespace serve_live_test
