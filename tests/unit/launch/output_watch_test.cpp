// What a job's output says of its GPUs (launch/output_watch.hpp): PyTorch's CUDA out of memory
// in both of its forms, CUDA errors, NCCL errors and timeouts, and how the watch splits, counts
// and bounds them. The lines are PyTorch's and NCCL's own formats with made-up numbers.
#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "launch/output_watch.hpp"
#include "launch/spawn.hpp"

namespace output_watch_test {

using dltune::launch::classify_output_line;
using dltune::launch::OutputWatch;
using ::testing::HasSubstr;

namespace {

constexpr const char* kOomNew =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process "
    "has 78.08 GiB memory in use. Of the allocated memory 70.12 GiB is allocated by PyTorch, and "
    "6.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
constexpr const char* kOomOld =
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 15.78 GiB total "
    "capacity; 14.21 GiB already allocated; 3.19 MiB free; 14.71 GiB reserved in total by "
    "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
    "fragmentation.";

double field(const dltune::launch::OutputEvent& e, const char* key) {
  return std::stod(e.fields.at(key));
}

std::int64_t fixed_clock() {
  return 1'700'000'000'000'000'000;
}

}  // namespace

TEST(OutputWatch, CudaOutOfMemoryInPyTorchTwosFormWithFragmentation) {
  const auto e = classify_output_line(kOomNew);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->text.rfind("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate", 0), 0u);
  EXPECT_EQ(e->fields.at("gpu"), "0");
  EXPECT_DOUBLE_EQ(field(*e, "tried"), 2.0 * (1 << 30));
  EXPECT_NEAR(field(*e, "total"), 79.15 * (1 << 30), 1);
  EXPECT_NEAR(field(*e, "free"), 1.06 * (1 << 30), 1);
  EXPECT_NEAR(field(*e, "allocated"), 70.12 * (1 << 30), 1);
  EXPECT_NEAR(field(*e, "reserved_unallocated"), 6.5 * (1 << 30), 1);
  // 6.5 GiB held in blocks too small for 2 GiB: fragmentation, its setting first.
  ASSERT_GE(e->actions.size(), 2u);
  EXPECT_THAT(e->actions[0], HasSubstr("6.50 GiB was reserved by PyTorch but unallocated"));
  EXPECT_THAT(e->actions[0], HasSubstr("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
  EXPECT_THAT(e->actions[1], HasSubstr("Lower the batch size"));
}

TEST(OutputWatch, CudaOutOfMemoryInTheOlderFormWithoutFragmentation) {
  const auto e = classify_output_line(kOomOld);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "cuda_oom");
  EXPECT_EQ(e->fields.at("gpu"), "1");
  EXPECT_DOUBLE_EQ(field(*e, "tried"), 20.0 * (1 << 20));
  EXPECT_NEAR(field(*e, "allocated"), 14.21 * (1 << 30), 1);
  // Reserved 14.71 less allocated 14.21: half a GiB, not fragmentation worth a setting.
  EXPECT_NEAR(field(*e, "reserved_unallocated"), 0.5 * (1 << 30), 1e4);
  ASSERT_FALSE(e->actions.empty());
  EXPECT_THAT(e->actions[0], HasSubstr("Lower the batch size"));
  for (const auto& a : e->actions) EXPECT_THAT(a, ::testing::Not(HasSubstr("expandable")));
}

TEST(OutputWatch, CudaErrorsSayWhatToDoByTheirCause) {
  auto e =
      classify_output_line("RuntimeError: CUDA error: an illegal memory access was encountered");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "cuda_error");
  EXPECT_EQ(e->fields.at("error"), "an illegal memory access was encountered");
  EXPECT_EQ(e->text, "RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_THAT(e->actions.front(), HasSubstr("CUDA_LAUNCH_BLOCKING=1"));
  e = classify_output_line("RuntimeError: CUDA error: uncorrectable ECC error encountered");
  ASSERT_TRUE(e);
  EXPECT_THAT(e->explanation, HasSubstr("hardware"));
  EXPECT_THAT(e->actions.front(), HasSubstr("dltune check --only gpu.ecc"));
  e = classify_output_line(
      "RuntimeError: CUDA error: no kernel image is available for execution on the device");
  ASSERT_TRUE(e);
  EXPECT_THAT(e->actions.front(), HasSubstr("gpu.driver_cuda"));
}

TEST(OutputWatch, NcclErrorsAndTheWatchdogsTimeout) {
  auto e = classify_output_line(
      "torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run "
      "with NCCL_DEBUG=INFO for details), NCCL version 2.19.3");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "nccl_error");
  EXPECT_EQ(e->fields.at("error"), "unhandled system error");
  EXPECT_EQ(e->text.rfind("torch.distributed.DistBackendError: NCCL error in:", 0), 0u);
  EXPECT_THAT(e->actions[1], HasSubstr("--shm-size"));
  e = classify_output_line(
      "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for 600043 milliseconds before timing out.");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "nccl_timeout");
  EXPECT_THAT(e->actions.front(), HasSubstr("dltune profile"));
}

TEST(OutputWatch, OrdinaryLinesAreNoEvent) {
  for (const char* line : {"Epoch 1:  10%|#         | 10/100 [00:01<00:09, 9.90it/s]",
                           "CUDA_VISIBLE_DEVICES=0,1", "Using CUDA device 0", "NCCL_DEBUG=INFO",
                           "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", "loss 0.123", ""})
    EXPECT_FALSE(classify_output_line(line)) << line;
}

TEST(OutputWatch, SplitsCountsAndBoundsWhatItKeeps) {
  OutputWatch watch(fixed_clock);
  // In pieces, on two channels, with a tqdm bar's carriage returns in between.
  const std::string out = std::string("step 1\r step 2\r") + kOomNew + "\n";
  for (std::size_t i = 0; i < out.size(); i += 7) watch.feed(out.substr(i, 7), 0, 1);
  watch.feed("Traceback (most recent call last):\n", 1, 1);
  watch.feed(kOomNew, 1, 1);  // the same error again, its line ended only at finish
  watch.finish();
  ASSERT_EQ(watch.events().size(), 1u);
  const auto& e = watch.events()[0];
  EXPECT_EQ(e.count, 2);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.wall_ns, fixed_clock());
  // JSON and text for run's summary.
  const auto j = dltune::launch::to_json(e);
  EXPECT_EQ(j["kind"], "cuda_oom");
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["rank"], 1);
  EXPECT_EQ(j["fields"]["gpu"], "0");
  EXPECT_THAT(dltune::launch::render_text(e), HasSubstr("CUDA out of memory (rank 1, 2 times): "));

  // Different errors beyond the cap are counted into the first of their kind, never kept.
  OutputWatch many(fixed_clock);
  for (int i = 0; i < 100; ++i)
    many.feed("RuntimeError: CUDA error: unknown error " + std::to_string(i) + "\n", 0,
              std::nullopt);
  ASSERT_EQ(many.events().size(), OutputWatch::kMaxEvents);
  EXPECT_EQ(many.events()[0].count, 1 + 100 - static_cast<int>(OutputWatch::kMaxEvents));
  // A line that never ends costs at most its first 16 KiB.
  OutputWatch endless(fixed_clock);
  for (int i = 0; i < 1000; ++i) endless.feed(std::string(4096, 'x'), 0, std::nullopt);
  endless.feed(" CUDA error: late\n", 0, std::nullopt);
  EXPECT_TRUE(endless.events().empty());
}

TEST(OutputWatch, WhatTheJobPrintsIsCleanedForTerminalsAndJson) {
  const auto e = classify_output_line(
      std::string("RuntimeError: CUDA error: bad \x1b[31mred\x1b[0m \xff\xfe bytes ") +
      std::string(1000, 'y'));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text.find('\x1b'), std::string::npos);
  EXPECT_NE(e->text.find("bad [31mred[0m ?? bytes"), std::string::npos) << e->text;
  EXPECT_LE(e->text.size(), 400u);
  EXPECT_NO_THROW((void)dltune::launch::to_json(*e).dump());
  // Well-formed UTF-8 stays.
  const auto u = classify_output_line("RuntimeError: CUDA error: caf\xc3\xa9");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->fields.at("error"), "caf\xc3\xa9");
}

TEST(OutputWatch, TorchSizes) {
  EXPECT_EQ(dltune::launch::parse_torch_size("2.00 GiB"), 2.0 * (1 << 30));
  EXPECT_EQ(dltune::launch::parse_torch_size("512.00 KiB"), 512.0 * 1024);
  EXPECT_EQ(dltune::launch::parse_torch_size("3 bytes"), 3.0);
  EXPECT_FALSE(dltune::launch::parse_torch_size("lots"));
  EXPECT_FALSE(dltune::launch::parse_torch_size("2.00 parsecs"));
  EXPECT_FALSE(dltune::launch::parse_torch_size("-1 GiB"));
}

// A job that prints them, run for real: spawn_and_wait reads its output as it passes through.
TEST(OutputWatch, SpawnAndWaitKeepsWhatTheJobPrinted) {
  dltune::launch::SpawnRequest req;
  req.argv = {"/bin/sh", "-c",
              std::string("echo 'training...'; echo \"") + kOomOld + "\" >&2; exit 1"};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.output_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  auto r = dltune::launch::spawn_and_wait(req);
  ::close(*req.output_fd);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 1);
  ASSERT_EQ(r->output_events.size(), 1u);
  EXPECT_EQ(r->output_events[0].kind, "cuda_oom");
  EXPECT_FALSE(r->output_events[0].rank);
  EXPECT_GT(r->output_events[0].wall_ns, 0);
}

}  // namespace output_watch_test
