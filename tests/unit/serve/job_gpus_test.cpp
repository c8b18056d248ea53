// serve's GPU families that join two sources: the GPUs' ECC counts by type, and each job
// group's GPU memory and GPUs from NVML's process lists and the groups' member pids. Exact
// lines of synthetic snapshots; the members as JobGroups reads them from a fixture host; the
// whole path (Exporter, the fake libnvidia-ml.so, a fixture host's groups).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "serve/exporter.hpp"
#include "serve/exposition.hpp"
#include "serve/job_groups.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "unit/serve/exposition_parser.hpp"

namespace dltune::serve::job_gpus_test {
namespace {

using dltune::testing::TempTree;
using testing::parse_exposition;

std::string render_text(const Snapshot& s) {
  std::string out;
  TextSink sink(out);
  render(s, sink);
  return out;
}

void expect_line(const std::string& text, const std::string& line) {
  EXPECT_NE(text.find("\n" + line + "\n"), std::string::npos) << "no line: " << line << "\n"
                                                              << text;
}

monitor::Gpu gpu(unsigned index, std::vector<gpu::GpuProcess> processes) {
  monitor::Gpu g;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.name = "NVIDIA H100";
  g.processes = std::move(processes);
  g.sampled_at_ns = 1;
  return g;
}

monitor::Cgroup group(const std::string& path, std::uint64_t pids) {
  monitor::Cgroup c;
  c.path = path;
  c.version = "v2";
  c.pids = pids;
  return c;
}

// What a test holds alive for its snapshot.
struct Host {
  monitor::Sample sample;
  std::vector<monitor::Cgroup> jobs;
  std::vector<std::vector<pid_t>> members;
  SlurmJobs slurm;
  PodUids pods;
  Snapshot snapshot(bool gpus = true) const {
    Snapshot s;
    s.version = "0.1.0";
    s.hostname = "node-1";
    s.sample = &sample;
    s.jobs = jobs;
    s.job_members = members;
    s.slurm = &slurm;
    s.pods = &pods;
    s.gpus = gpus;
    return s;
  }
};

TEST(GpuEcc, CountsByTypeAndNoSeriesWithoutThem) {
  Host h;
  auto on = gpu(0, {});
  on.ecc_corrected = 12;
  on.ecc_uncorrected = 1;
  auto only_corrected = gpu(1, {});
  only_corrected.ecc_corrected = 0;
  const auto off = gpu(2, {});  // ECC off or unknown: no counts
  h.sample.gpus = {on, only_corrected, off};
  const auto text = render_text(h.snapshot());
  const auto e = parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << text;
  EXPECT_EQ(e.type.at("dltune_gpu_ecc_errors_total"), "counter");
  expect_line(text, R"(dltune_gpu_ecc_errors_total{gpu="0",uuid="GPU-0",UUID="GPU-0",)"
                    R"(modelName="NVIDIA H100",Hostname="node-1",type="corrected"} 12)");
  expect_line(text, R"(dltune_gpu_ecc_errors_total{gpu="0",uuid="GPU-0",UUID="GPU-0",)"
                    R"(modelName="NVIDIA H100",Hostname="node-1",type="uncorrected"} 1)");
  expect_line(text, R"(dltune_gpu_ecc_errors_total{gpu="1",uuid="GPU-1",UUID="GPU-1",)"
                    R"(modelName="NVIDIA H100",Hostname="node-1",type="corrected"} 0)");
  EXPECT_EQ(e.all("dltune_gpu_ecc_errors_total").size(), 3u);
  EXPECT_TRUE(e.all("dltune_gpu_ecc_errors_total", {{"gpu", "2"}}).empty());

  // No GPU with counts: no family at all.
  h.sample.gpus = {off};
  EXPECT_FALSE(
      parse_exposition(render_text(h.snapshot())).help.count("dltune_gpu_ecc_errors_total"));
  // --no-gpus: none either.
  h.sample.gpus = {on};
  EXPECT_FALSE(
      parse_exposition(render_text(h.snapshot(false))).help.count("dltune_gpu_ecc_errors_total"));
}

// Three GPUs; a job of `dltune run` with two processes on GPU 0 and one of them on GPU 1 too, a
// Slurm job whose process's memory NVML does not give, a pod on none, an idle group, and a
// process that is no job's.
Host jobs_on_gpus() {
  Host h;
  h.sample.gpus = {
      gpu(0, {{100, 1073741824, 50}, {101, 536870912, 25}, {200, 4096, 20}}),  // 200: no job's
      gpu(1, {{101, 268435456, 100}, {102, 4096, 30}}),  // over 100% together: 1
      gpu(2, {{300, std::nullopt, std::nullopt}}),       // NVML_VALUE_NOT_AVAILABLE
  };
  h.jobs = {group("/dltune/idle", 1), group("/dltune/job-a", 3),
            group("/kubepods.slice/kubepods-podx.slice", 0), group("/slurm/uid_0/job_5", 1)};
  h.members = {{400}, {100, 101, 102}, {}, {300}};
  h.slurm["/slurm/uid_0/job_5"] = {"5", "root", ""};
  h.pods["/kubepods.slice/kubepods-podx.slice"] = "0a1b2c3d-1111-2222-3333-444455556666";
  return h;
}

TEST(JobGpus, MemoryIsSummedPerJobAndGpuAndOthersProcessesAreNotCounted) {
  const auto h = jobs_on_gpus();
  const auto text = render_text(h.snapshot());
  const auto e = parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << text;
  EXPECT_EQ(e.type.at("dltune_job_gpu_memory_used_bytes"), "gauge");
  EXPECT_EQ(e.type.at("dltune_job_gpus"), "gauge");
  // 1 GiB + 512 MiB: the job's two processes on GPU 0; the 4 KiB of pid 200 is no job's.
  expect_line(text,
              R"(dltune_job_gpu_memory_used_bytes{cgroup="/dltune/job-a",gpu="0",uuid="GPU-0"} )"
              "1610612736");
  expect_line(text,
              R"(dltune_job_gpu_memory_used_bytes{cgroup="/dltune/job-a",gpu="1",uuid="GPU-1"} )"
              "268439552");
  // The Slurm job's process on GPU 2 has no memory figure: no series rather than a wrong sum.
  EXPECT_EQ(e.all("dltune_job_gpu_memory_used_bytes").size(), 2u) << text;
  // The job's share of each GPU: its processes' SM utilisation summed (at most 1); none where a
  // process's is not known (GPU 2).
  expect_line(text,
              R"(dltune_job_gpu_utilization_ratio{cgroup="/dltune/job-a",gpu="0",uuid="GPU-0"} )"
              "0.75");
  expect_line(text,
              R"(dltune_job_gpu_utilization_ratio{cgroup="/dltune/job-a",gpu="1",uuid="GPU-1"} )"
              "1");
  EXPECT_EQ(e.all("dltune_job_gpu_utilization_ratio").size(), 2u) << text;
  expect_line(text, R"(dltune_job_gpus{cgroup="/dltune/idle"} 0)");
  expect_line(text, R"(dltune_job_gpus{cgroup="/dltune/job-a"} 2)");
  expect_line(text, R"(dltune_job_gpus{cgroup="/kubepods.slice/kubepods-podx.slice",)"
                    R"(pod_uid="0a1b2c3d-1111-2222-3333-444455556666"} 0)");
  expect_line(text,
              R"(dltune_job_gpus{cgroup="/slurm/uid_0/job_5",slurm_job_id="5",user="root"} 1)");
  // After the jobs' own families, as docs/metrics.md lists them.
  const auto at = [&](const char* name) {
    return std::find(e.families.begin(), e.families.end(), name) - e.families.begin();
  };
  EXPECT_EQ(at("dltune_job_gpu_memory_used_bytes"), at("dltune_job_processes") + 1);
  EXPECT_EQ(at("dltune_job_gpu_utilization_ratio"), at("dltune_job_processes") + 2);
  EXPECT_EQ(at("dltune_job_gpus"), at("dltune_job_processes") + 3);
}

TEST(JobGpus, ASlurmStepCarriesItsLabelsAndTheGpuOnes) {
  auto h = jobs_on_gpus();
  h.jobs = {group("/slurm/uid_0/job_5/step_0", 2)};
  h.members = {{100, 101}};
  h.slurm.clear();
  h.slurm["/slurm/uid_0/job_5/step_0"] = {"5", "root", "0"};
  const auto text = render_text(h.snapshot());
  expect_line(text, R"(dltune_job_gpu_memory_used_bytes{cgroup="/slurm/uid_0/job_5/step_0",)"
                    R"(slurm_job_id="5",user="root",step="0",gpu="0",uuid="GPU-0"} 1610612736)");
  expect_line(text, R"(dltune_job_gpus{cgroup="/slurm/uid_0/job_5/step_0",slurm_job_id="5",)"
                    R"(user="root",step="0"} 2)");
}

// The join series: one per GPU and the outermost job group whose processes run on it (a Slurm
// job, not also its step; a pod, not also its container), with the GPU's labels dcgm-exporter's
// series join on and the job's own.
TEST(JobGpus, EachGpuInUseJoinsToItsOutermostJob) {
  auto h = jobs_on_gpus();
  // The Slurm job's step holds its process too, and a pod's container runs on GPU 1 with the
  // job of `dltune run`.
  h.jobs.push_back(group("/slurm/uid_0/job_5/step_0", 1));
  h.members.push_back({300});
  h.slurm["/slurm/uid_0/job_5/step_0"] = {"5", "root", "0"};
  h.jobs.push_back(group("/kubepods.slice/kubepods-podx.slice/cri-containerd-c1.scope", 1));
  h.members.push_back({500});
  h.members[2] = {500};  // the pod's own group: its container's process
  h.sample.gpus[1].processes.push_back({500, 1048576});
  const auto text = render_text(h.snapshot());
  const auto e = parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << text;
  EXPECT_EQ(e.type.at("dltune_gpu_job_info"), "gauge");
  expect_line(text, R"(dltune_gpu_job_info{gpu="0",UUID="GPU-0",Hostname="node-1",)"
                    R"(hostname="node-1",cgroup="/dltune/job-a"} 1)");
  expect_line(text, R"(dltune_gpu_job_info{gpu="1",UUID="GPU-1",Hostname="node-1",)"
                    R"(hostname="node-1",cgroup="/dltune/job-a"} 1)");
  expect_line(text, R"(dltune_gpu_job_info{gpu="1",UUID="GPU-1",Hostname="node-1",)"
                    R"(hostname="node-1",cgroup="/kubepods.slice/kubepods-podx.slice",)"
                    R"(pod_uid="0a1b2c3d-1111-2222-3333-444455556666"} 1)");
  expect_line(text, R"(dltune_gpu_job_info{gpu="2",UUID="GPU-2",Hostname="node-1",)"
                    R"(hostname="node-1",cgroup="/slurm/uid_0/job_5",slurm_job_id="5",)"
                    R"(user="root"} 1)");
  // Not the step nor the container beside their job and pod, nor the idle group.
  EXPECT_EQ(e.all("dltune_gpu_job_info").size(), 4u) << text;
  EXPECT_TRUE(e.all("dltune_gpu_job_info", {{"step", "0"}}).empty());
  EXPECT_TRUE(e.all("dltune_gpu_job_info", {{"cgroup", "/dltune/idle"}}).empty());

  // A step whose job's group is not among the groups: the step, with its labels.
  h = jobs_on_gpus();
  h.jobs = {group("/slurm/uid_0/job_5/step_0", 1)};
  h.members = {{300}};
  h.slurm.clear();
  h.slurm["/slurm/uid_0/job_5/step_0"] = {"5", "root", "0"};
  expect_line(render_text(h.snapshot()),
              R"(dltune_gpu_job_info{gpu="2",UUID="GPU-2",Hostname="node-1",)"
              R"(hostname="node-1",cgroup="/slurm/uid_0/job_5/step_0",slurm_job_id="5",)"
              R"(user="root",step="0"} 1)");
  // A group whose name only starts like another's is not below it.
  h = jobs_on_gpus();
  h.jobs = {group("/dltune/job-a", 1), group("/dltune/job-ab", 1)};
  h.members = {{100}, {100}};
  EXPECT_EQ(parse_exposition(render_text(h.snapshot())).all("dltune_gpu_job_info").size(), 2u);
}

TEST(JobGpus, WhatIsNotKnownIsNotWritten) {
  // No GPU lists a process: every group with known processes uses none, members or not.
  auto h = jobs_on_gpus();
  for (auto& g : h.sample.gpus) g.processes.clear();
  h.members.clear();  // the exporter does not read them then
  auto text = render_text(h.snapshot());
  auto e = parse_exposition(text);
  EXPECT_FALSE(e.help.count("dltune_job_gpu_memory_used_bytes"));
  EXPECT_FALSE(e.help.count("dltune_gpu_job_info"));
  ASSERT_EQ(e.all("dltune_job_gpus").size(), 4u) << text;
  for (const auto* s : e.all("dltune_job_gpus")) EXPECT_EQ(s->value_text, "0");

  // A group whose processes are not known (no cgroup.procs) has no GPU count.
  h.jobs[0].pids.reset();
  e = parse_exposition(render_text(h.snapshot()));
  EXPECT_FALSE(e.find("dltune_job_gpus", {{"cgroup", "/dltune/idle"}}));
  EXPECT_EQ(e.all("dltune_job_gpus").size(), 3u);

  // Processes listed but the members not read: whose they are is not known.
  h = jobs_on_gpus();
  h.members.clear();
  e = parse_exposition(render_text(h.snapshot()));
  EXPECT_FALSE(e.help.count("dltune_job_gpu_memory_used_bytes"));
  EXPECT_FALSE(e.help.count("dltune_job_gpus"));
  EXPECT_FALSE(e.help.count("dltune_gpu_job_info"));

  // NVML has not read any GPU yet, or GPUs are off: nothing.
  h = jobs_on_gpus();
  for (auto& g : h.sample.gpus) {
    g.processes.clear();
    g.sampled_at_ns.reset();
  }
  e = parse_exposition(render_text(h.snapshot()));
  EXPECT_FALSE(e.help.count("dltune_job_gpus"));
  h = jobs_on_gpus();
  e = parse_exposition(render_text(h.snapshot(false)));
  EXPECT_FALSE(e.help.count("dltune_job_gpu_memory_used_bytes"));
  EXPECT_FALSE(e.help.count("dltune_job_gpus"));
}

constexpr const char* kMountV2 =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

// JobGroups reads the members only when asked, sorted, beside the groups it returns; a Slurm
// job's own group, which holds no process, has its steps'.
TEST(JobGpus, JobGroupsReadTheMembersWhenAsked) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  t.write("sys/fs/cgroup/dltune/run-1/memory.current", "7\n");
  t.write("sys/fs/cgroup/dltune/run-1/cgroup.procs", "300\n100\n");
  t.write("sys/fs/cgroup/dltune/run-2/memory.current", "7\n");
  t.write("sys/fs/cgroup/dltune/run-2/cgroup.procs", "");
  const auto root = t.root();
  JobGroups groups(root, {}, true);
  std::vector<monitor::Cgroup> out;
  monitor::Notices notices;
  groups.collect(out, notices);
  ASSERT_EQ(out.size(), 2u) << ::testing::PrintToString(notices.take());
  EXPECT_TRUE(groups.members().empty()) << "not asked: not read";
  groups.collect(out, notices, true);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(groups.members().size(), 2u);
  EXPECT_EQ(out[0].path, "/dltune/run-1");
  EXPECT_EQ(groups.members()[0], (std::vector<pid_t>{100, 300}));
  EXPECT_TRUE(groups.members()[1].empty());
  // A group that went away takes its members with it.
  std::filesystem::remove_all(t.dir() / "sys/fs/cgroup/dltune/run-1");
  groups.collect(out, notices, true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].path, "/dltune/run-2");
  ASSERT_EQ(groups.members().size(), 1u);
  EXPECT_TRUE(groups.members()[0].empty());
  groups.collect(out, notices);
  EXPECT_TRUE(groups.members().empty());
}

// The whole path: the exporter samples the fake NVML (GPU 0 has pids 4242 and 4243, 1 GiB and
// 512 MiB, and volatile ECC counts) and a fixture host's job group holding 4242.
TEST(JobGpus, TheExporterJoinsNvmlsProcessesWithTheGroups) {
  auto config = dltune::testing::fake_hgx(2);
  config["gpus"][0]["processes"] = {{{"pid", 4242}, {"used_memory_bytes", 1073741824ull}},
                                    {{"pid", 4243}, {"used_memory_bytes", 536870912ull}}};
  config["gpus"][0]["ecc_errors"]["volatile_corrected"] = 17;
  config["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 2;
  config["gpus"][1]["ecc_enabled"] = false;  // counts there, but ECC off: not read
  dltune::testing::FakeNvmlConfig fake(config);
  TempTree t;
  t.write("proc/stat",
          "cpu  300 0 100 1000 0 0 0 0 0 0\ncpu0 300 0 100 1000 0 0 0 0 0 0\n"
          "ctxt 10\nprocesses 5\nprocs_running 1\nprocs_blocked 0\n");
  t.write("proc/meminfo", "MemTotal:       1000 kB\nMemFree:         500 kB\n");
  t.write("proc/vmstat", "pgfault 1\n");
  t.write("proc/self/mountinfo", kMountV2);
  t.write("sys/fs/cgroup/dltune/job/memory.current", "4096\n");
  t.write("sys/fs/cgroup/dltune/job/cgroup.procs", "4242\n");
  const auto root = t.root();
  ExporterOptions o;
  o.interval_ns = 100'000'000;
  o.gpus = true;
  o.nvml_library = DLTUNE_FAKE_NVML;
  auto e = Exporter::open(root, o);
  ASSERT_TRUE(e) << e.error().message();
  // NVML is read on a thread of its own: sample until its first reading is in.
  testing::Exposition parsed;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*e)->sample());
    parsed = parse_exposition((*e)->exposition()->text);
    if (parsed.help.count("dltune_job_gpus")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors);
  const std::string uuid0 = config["gpus"][0]["uuid"];
  const auto* mem = parsed.find("dltune_job_gpu_memory_used_bytes",
                                {{"cgroup", "/dltune/job"}, {"gpu", "0"}, {"uuid", uuid0}});
  ASSERT_TRUE(mem) << (*e)->exposition()->text;
  EXPECT_EQ(mem->value_text, "1073741824") << "4243 is no job's";
  ASSERT_TRUE(parsed.find("dltune_job_gpus", {{"cgroup", "/dltune/job"}}));
  EXPECT_EQ(parsed.find("dltune_job_gpus", {{"cgroup", "/dltune/job"}})->value_text, "1");
  // GPU 0 joins to the job; GPU 1, which runs nothing of it, to none.
  const auto joins = parsed.all("dltune_gpu_job_info");
  ASSERT_EQ(joins.size(), 1u) << (*e)->exposition()->text;
  EXPECT_EQ(joins[0]->labels.at("UUID"), uuid0);
  EXPECT_EQ(joins[0]->labels.at("cgroup"), "/dltune/job");
  const auto ecc = parsed.all("dltune_gpu_ecc_errors_total", {{"gpu", "0"}});
  ASSERT_EQ(ecc.size(), 2u);
  EXPECT_EQ(parsed.all("dltune_gpu_ecc_errors_total", {{"gpu", "0"}, {"type", "corrected"}})[0]
                ->value_text,
            "17");
  EXPECT_EQ(parsed.all("dltune_gpu_ecc_errors_total", {{"gpu", "0"}, {"type", "uncorrected"}})[0]
                ->value_text,
            "2");
  EXPECT_TRUE(parsed.all("dltune_gpu_ecc_errors_total", {{"gpu", "1"}}).empty())
      << "ECC off: no counts";
}

}  // namespace
}  // namespace dltune::serve::job_gpus_test
