#pragma once
// What a training job's output says about its GPUs, read as it passes through (run, record,
// profile, bench): PyTorch's "CUDA out of memory", "CUDA error: ...", and NCCL's errors and
// watchdog timeouts. Each is an event with the time it was printed, the rank that printed it,
// what it says, and the action to take; the same error printed again (a traceback per rank, a
// retry loop) is one event with its count. Pure: bytes in, events out.
//
// The forms read (PyTorch's c10/cuda/CUDACachingAllocator.cpp and c10/cuda/CUDAException.cpp,
// torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, NCCL's ncclGetErrorString):
//   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total
//     capacity of 79.15 GiB of which 1.06 GiB is free. ... Of the allocated memory 70.12 GiB is
//     allocated by PyTorch, and 6.50 GiB is reserved by PyTorch but unallocated. ...
//   RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total
//     capacity; 14.21 GiB already allocated; 3.19 MiB free; 14.71 GiB reserved in total by
//     PyTorch)                                                      (PyTorch before 2.1)
//   RuntimeError: CUDA error: an illegal memory access was encountered
//   torch.distributed.DistBackendError: NCCL error in: .../ProcessGroupNCCL.cpp:1970, unhandled
//     system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
//   [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE,
//     ...) ran for 600000 milliseconds before timing out.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_fwd.hpp"

namespace dltune::launch {

struct OutputEvent {
  std::int64_t wall_ns = 0;  // when it was first printed (CLOCK_REALTIME)
  std::string kind;          // "cuda_oom", "cuda_error", "nccl_error", "nccl_timeout"
  std::string text;          // what the job printed, from the error's name on (at most 400 bytes)
  std::string explanation;   // what it means for the job
  std::vector<std::string> actions;  // what to try, the likeliest first
  std::optional<int> rank;           // the rank whose output it was (`run --nproc N`)
  int count = 1;                     // times printed
  // What the line gives: the OOM's "tried", "gpu", "total", "free", "allocated",
  // "reserved_unallocated" (bytes, as numbers); a CUDA error's "error"; NCCL's "error".
  std::map<std::string, std::string> fields;
};

// The event a line is, without its time, rank or count; nullopt for an ordinary line.
[[nodiscard]] std::optional<OutputEvent> classify_output_line(std::string_view line);

// "2.00 GiB", "20.00 MiB", "512.00 KiB", "3 bytes" -> bytes.
[[nodiscard]] std::optional<double> parse_torch_size(std::string_view s);

// Splits each stream into lines ('\n' or '\r') and keeps the events their lines are, at most
// kMaxEvents different ones (then only counts). Channels keep their partial lines apart.
class OutputWatch {
 public:
  static constexpr std::size_t kMaxEvents = 32;
  // `now_ns`: the wall clock (tests give their own).
  explicit OutputWatch(std::int64_t (*now_ns)() = nullptr);
  void feed(std::string_view bytes, std::size_t channel, std::optional<int> rank);
  void finish();
  [[nodiscard]] const std::vector<OutputEvent>& events() const { return events_; }

 private:
  void line(std::string_view text, std::optional<int> rank);
  std::int64_t (*now_ns_)();
  std::map<std::size_t, std::pair<std::string, std::optional<int>>> pending_;
  std::vector<OutputEvent> events_;
};

[[nodiscard]] inventory::Json to_json(const OutputEvent& e);
// "CUDA out of memory" for "cuda_oom", ...; an unknown kind as it is.
[[nodiscard]] std::string_view output_event_name(std::string_view kind);
// "CUDA out of memory (rank 1, 3 times): Tried to allocate ..." and the actions, for a summary.
[[nodiscard]] std::string render_text(const OutputEvent& e);

}  // namespace dltune::launch
