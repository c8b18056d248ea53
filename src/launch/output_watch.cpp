#include "launch/output_watch.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace dltune::launch {

namespace {

using std::string_view;

constexpr std::size_t kMaxText = 400;
constexpr double kGiB = 1024.0 * 1024 * 1024;

std::int64_t wall_now() {
  return now_ns(CLOCK_REALTIME);
}

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), 0 when it is not one.
std::size_t utf8_sequence(string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90)) return 0;
    return 4;
  }
  return 0;
}

// The text from `at` on, trimmed, at most kMaxText bytes: control characters dropped and bytes
// that are not UTF-8 written '?' (it goes to terminals, JSON and the recording).
std::string excerpt(string_view line, std::size_t at) {
  std::string out;
  auto rest = text::trim(line.substr(at));
  while (!rest.empty() && out.size() < kMaxText) {
    const auto n = utf8_sequence(rest);
    if (n == 0) {
      out += '?';
      rest.remove_prefix(1);
      continue;
    }
    if (out.size() + n > kMaxText) break;
    const auto c = static_cast<unsigned char>(rest[0]);
    if (n > 1 || (c >= 0x20 && c != 0x7f)) out.append(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  return out;
}

// The size written just before `marker` ("... 6.50 GiB is reserved ...") or after it.
std::optional<double> size_before(string_view s, string_view marker) {
  const auto at = s.find(marker);
  if (at == string_view::npos) return std::nullopt;
  auto head = s.substr(0, at);
  // "70.12 GiB": the last two words before the marker.
  const auto unit_start = head.rfind(' ', head.size() >= 2 ? head.size() - 2 : 0);
  if (unit_start == string_view::npos) return std::nullopt;
  const auto number_start = head.rfind(' ', unit_start > 0 ? unit_start - 1 : 0);
  const auto from = number_start == string_view::npos ? 0 : number_start + 1;
  return parse_torch_size(head.substr(from));
}

std::optional<double> size_after(string_view s, string_view marker) {
  const auto at = s.find(marker);
  if (at == string_view::npos) return std::nullopt;
  return parse_torch_size(s.substr(at + marker.size()));
}

std::string gib(double bytes) {
  return fmt::format("{:.2f} GiB", bytes / kGiB);
}

void put(OutputEvent& e, const char* key, const std::optional<double>& v) {
  if (v) e.fields[key] = fmt::format("{:.0f}", *v);
}

OutputEvent cuda_oom(string_view line, std::size_t at) {
  OutputEvent e;
  e.kind = "cuda_oom";
  e.text = excerpt(line, at);
  const auto tried = size_after(line, "Tried to allocate ");
  put(e, "tried", tried);
  // PyTorch 2.1 and later: "GPU 0 has a total capacity of X of which Y is free. ... Of the
  // allocated memory A is allocated by PyTorch, and R is reserved by PyTorch but unallocated."
  // Before: "(GPU 0; X total capacity; A already allocated; Y free; T reserved in total by
  // PyTorch)".
  std::optional<double> total = size_after(line, "has a total capacity of ");
  std::optional<double> free = size_before(line, " is free");
  std::optional<double> allocated = size_before(line, " is allocated by PyTorch");
  std::optional<double> unallocated = size_before(line, " is reserved by PyTorch but unallocated");
  if (!total) total = size_before(line, " total capacity");
  if (!free) free = size_before(line, " free;");
  if (!allocated) allocated = size_before(line, " already allocated");
  if (!unallocated)
    if (const auto reserved = size_before(line, " reserved in total by PyTorch");
        reserved && allocated && *reserved >= *allocated)
      unallocated = *reserved - *allocated;
  if (const auto g = line.find("GPU "); g != string_view::npos) {
    int index = 0;
    const auto* p = line.data() + g + 4;
    if (const auto [end, ec] = std::from_chars(p, line.data() + line.size(), index);
        ec == std::errc() && end != p)
      e.fields["gpu"] = std::to_string(index);
  }
  put(e, "total", total);
  put(e, "free", free);
  put(e, "allocated", allocated);
  put(e, "reserved_unallocated", unallocated);
  e.explanation = "The job asked for more GPU memory than was free, and stopped.";
  // Fragmentation: memory PyTorch holds in blocks too small for the request. Large when it is at
  // least the request and at least 1 GiB or a twentieth of the GPU.
  const bool fragmented = unallocated &&
                          *unallocated >= std::max(1.0 * kGiB, total ? *total / 20 : 0.0) &&
                          (!tried || *unallocated >= *tried);
  if (fragmented)
    e.actions.push_back(fmt::format(
        "{} was reserved by PyTorch but unallocated (fragmented): set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (dltune run --env "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) so that freed blocks can be reused",
        gib(*unallocated)));
  e.actions.push_back(
      "Lower the batch size per GPU (keep the effective batch with gradient accumulation)");
  e.actions.push_back(
      "Keep fewer activations: activation checkpointing (torch.utils.checkpoint), mixed "
      "precision (bf16 autocast)");
  if (free && total && *free < *total / 100 && allocated && *allocated < *total / 2)
    e.actions.push_back(
        "Most of the GPU's memory is held outside PyTorch's allocator (another process, or "
        "this one's CUDA context and libraries): `nvidia-smi` shows which processes hold it");
  return e;
}

OutputEvent cuda_error(string_view line, std::size_t at, std::size_t after_marker) {
  OutputEvent e;
  e.kind = "cuda_error";
  e.text = excerpt(line, at);
  const std::string what = excerpt(line, after_marker);
  e.fields["error"] = what;
  e.explanation = "A CUDA call failed in the job, which stopped it.";
  if (what.find("uncorrectable ECC") != std::string::npos ||
      what.find("ECC error") != std::string::npos) {
    e.explanation = "The GPU found an uncorrectable memory error while the job ran: hardware.";
    e.actions.push_back(
        "Drain the node: `dltune check --only gpu.ecc` shows the GPU's ECC and row remapping, "
        "`dltune doctor` the Xid; the GPU needs a reset, and service if it happens again");
  } else if (what.find("no kernel image is available") != std::string::npos) {
    e.actions.push_back(
        "This torch was not built for the GPU's architecture: install a torch whose CUDA "
        "supports it (`dltune check --only gpu.driver_cuda`)");
  } else if (what.find("illegal memory access") != std::string::npos ||
             what.find("device-side assert") != std::string::npos ||
             what.find("misaligned address") != std::string::npos) {
    e.actions.push_back(
        "A bug in the job or in a kernel it calls (an index out of range is the usual "
        "device-side assert): rerun with CUDA_LAUNCH_BLOCKING=1 so the traceback names the "
        "operation");
    e.actions.push_back("If the same code ran before on this GPU, `dltune doctor` for an Xid");
  } else if (what.find("out of memory") != std::string::npos) {
    e.actions.push_back("Lower the batch size per GPU; see `CUDA out of memory` above if printed");
  } else {
    e.actions.push_back(
        "`dltune doctor` for an Xid or a GPU fallen off the bus at the same time; "
        "CUDA_LAUNCH_BLOCKING=1 makes the traceback name the operation");
  }
  return e;
}

OutputEvent nccl(string_view line, std::size_t at, bool timeout) {
  OutputEvent e;
  e.kind = timeout ? "nccl_timeout" : "nccl_error";
  e.text = excerpt(line, at);
  if (timeout) {
    e.explanation =
        "A collective (all-reduce, broadcast, ...) waited past its timeout: a rank stopped, "
        "hung or fell far behind, and the job was stopped.";
    e.actions.push_back(
        "Find the rank that did not arrive: its own output (an earlier error), `dltune profile` "
        "(it names the straggler rank) and `dltune doctor` for a GPU Xid at that time");
    e.actions.push_back(
        "Raise the timeout only for a known slow step (init_process_group(timeout=...))");
    return e;
  }
  const auto has = [&](string_view s) { return line.find(s) != string_view::npos; };
  e.explanation = "NCCL failed in the job, which stopped it.";
  if (has("unhandled system error") || has("ncclSystemError")) {
    e.fields["error"] = "unhandled system error";
    e.actions.push_back(
        "Run with NCCL_DEBUG=INFO: the line before the error names the failing call");
    e.actions.push_back(
        "The usual causes: /dev/shm too small in a container (docker run --shm-size; "
        "`dltune check --only shm.size`), an InfiniBand or RoCE port down or NCCL_IB_HCA naming "
        "a missing one, a low memlock limit (`dltune check -p distributed`)");
  } else if (has("unhandled cuda error") || has("ncclUnhandledCudaError")) {
    e.fields["error"] = "unhandled cuda error";
    e.actions.push_back(
        "A CUDA call failed inside NCCL: the rank's own output and `dltune doctor` (an Xid, a "
        "GPU fallen off the bus) say which");
  } else if (has("remote process exited") || has("ncclRemoteError")) {
    e.fields["error"] = "remote process exited";
    e.actions.push_back("Another rank died first: its own output has the real error");
  } else {
    e.actions.push_back("Run with NCCL_DEBUG=INFO for the failing call");
  }
  return e;
}

}  // namespace

std::optional<double> parse_torch_size(std::string_view s) {
  s = text::trim(s);
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data() || !std::isfinite(v) || v < 0) return std::nullopt;
  auto unit = text::trim(s.substr(static_cast<std::size_t>(p - s.data())));
  double scale = 0;
  if (unit.starts_with("GiB"))
    scale = kGiB;
  else if (unit.starts_with("MiB"))
    scale = 1024.0 * 1024;
  else if (unit.starts_with("KiB"))
    scale = 1024.0;
  else if (unit.starts_with("TiB"))
    scale = kGiB * 1024;
  else if (unit.starts_with("bytes") || unit.starts_with("B"))
    scale = 1;
  else
    return std::nullopt;
  return v * scale;
}

std::optional<OutputEvent> classify_output_line(std::string_view line) {
  // Most lines hold none of these words: two searches decide.
  const auto cuda = line.find("CUDA");
  const auto nccl_at = line.find("NCCL");
  const auto watchdog = line.find("Watchdog caught collective operation timeout");
  if (cuda == string_view::npos && nccl_at == string_view::npos && watchdog == string_view::npos)
    return std::nullopt;
  if (const auto oom = line.find("CUDA out of memory"); oom != string_view::npos) {
    // From the exception's name when there is one: "torch.OutOfMemoryError: CUDA out ...".
    const auto head = line.substr(0, oom);
    const auto name = head.rfind(' ', head.size() >= 2 ? head.size() - 2 : 0);
    return cuda_oom(
        line, oom >= 2 && head.ends_with(": ") ? (name == string_view::npos ? 0 : name + 1) : oom);
  }
  if (watchdog != string_view::npos) return nccl(line, watchdog, true);
  if (const auto err = line.find("CUDA error: "); err != string_view::npos) {
    const auto head = line.substr(0, err);
    const auto name = head.rfind(' ', head.size() >= 2 ? head.size() - 2 : 0);
    const std::size_t from =
        head.ends_with(": ") ? (name == string_view::npos ? 0 : name + 1) : err;
    return cuda_error(line, from, err + 12);
  }
  if (const auto n = line.find("NCCL error"); n != string_view::npos) {
    const auto head = line.substr(0, n);
    const auto name = head.rfind(' ', head.size() >= 2 ? head.size() - 2 : 0);
    return nccl(line, head.ends_with(": ") ? (name == string_view::npos ? 0 : name + 1) : n, false);
  }
  for (const char* code : {"ncclSystemError", "ncclUnhandledCudaError", "ncclRemoteError"})
    if (const auto n = line.find(code); n != string_view::npos) return nccl(line, n, false);
  return std::nullopt;
}

OutputWatch::OutputWatch(std::int64_t (*now_ns)()) : now_ns_(now_ns ? now_ns : wall_now) {}

void OutputWatch::feed(std::string_view bytes, std::size_t channel, std::optional<int> rank) {
  // A job that never ends a line must not grow this without bound: an error is a line of its
  // own, so a line's first 16 KiB is enough.
  constexpr std::size_t kMaxLine = 16 * 1024;
  auto& [pending, pending_rank] = pending_[channel];
  pending_rank = rank;
  while (!bytes.empty()) {
    const auto cut = bytes.find_first_of("\r\n");
    const auto part = bytes.substr(0, cut);
    if (pending.size() < kMaxLine) pending.append(part.substr(0, kMaxLine - pending.size()));
    if (cut == string_view::npos) return;
    line(pending, rank);
    pending.clear();
    bytes.remove_prefix(cut + 1);
  }
}

void OutputWatch::finish() {
  for (auto& [channel, p] : pending_) {
    if (!p.first.empty()) line(p.first, p.second);
    p.first.clear();
  }
}

void OutputWatch::line(std::string_view text, std::optional<int> rank) {
  if (text.empty()) return;
  auto e = classify_output_line(text);
  if (!e) return;
  for (auto& seen : events_)
    if (seen.kind == e->kind && seen.text == e->text) {
      ++seen.count;
      return;
    }
  // The same kind again with another text (a second OOM asking for another size) is its own
  // event while there is room; beyond it, the first of its kind counts it.
  if (events_.size() >= kMaxEvents) {
    for (auto& seen : events_)
      if (seen.kind == e->kind) {
        ++seen.count;
        return;
      }
    return;
  }
  e->wall_ns = now_ns_();
  e->rank = rank;
  events_.push_back(std::move(*e));
}

inventory::Json to_json(const OutputEvent& e) {
  inventory::Json j{{"time_ns", e.wall_ns}, {"kind", e.kind},
                    {"text", e.text},       {"explanation", e.explanation},
                    {"actions", e.actions}, {"count", e.count},
                    {"fields", e.fields}};
  j["rank"] = e.rank ? inventory::Json(*e.rank) : inventory::Json(nullptr);
  return j;
}

std::string_view output_event_name(std::string_view kind) {
  return kind == "cuda_oom"       ? "CUDA out of memory"
         : kind == "cuda_error"   ? "CUDA error"
         : kind == "nccl_timeout" ? "NCCL collective timeout"
         : kind == "nccl_error"   ? "NCCL error"
                                  : kind;
}

std::string render_text(const OutputEvent& e) {
  const auto name = output_event_name(e.kind);
  std::string where;
  if (e.rank) where = fmt::format("rank {}", *e.rank);
  if (e.count > 1) where += fmt::format("{}{} times", where.empty() ? "" : ", ", e.count);
  std::string out = fmt::format("{}{}: {}\n  {}\n", name, where.empty() ? "" : " (" + where + ")",
                                e.text, e.explanation);
  for (const auto& a : e.actions) out += "  action: " + a + "\n";
  return out;
}

}  // namespace dltune::launch
