#include "pystack/render.hpp"
#include "core/json.hpp"

#include <fmt/core.h>

namespace dltune::pystack {

namespace {

std::string frame_text(const Frame& f) {
  return f.line > 0 ? fmt::format("{} ({}:{})", f.function, f.file, f.line)
                    : fmt::format("{} ({})", f.function, f.file);
}

}  // namespace

std::string version_text(const Interpreter& i) {
  return i.micro >= 0 ? fmt::format("{}.{}.{}", i.major, i.minor, i.micro)
                      : fmt::format("{}.{}", i.major, i.minor);
}

std::string dump_text(const Interpreter& interpreter, pid_t pid,
                      const std::vector<ThreadStack>& threads) {
  std::string out =
      fmt::format("Process {}: Python {} ({})\n", pid, version_text(interpreter), interpreter.path);
  for (const auto& t : threads) {
    out += fmt::format("\nThread {:#x} (native {})\n", t.thread_id, t.native_id);
    if (t.frames.empty()) out += "    (no Python frames)\n";
    for (const auto& f : t.frames) out += "    " + frame_text(f) + "\n";
    if (t.truncated) out += fmt::format("    ... (deeper than {} frames: cut)\n", kMaxFrames);
  }
  return out;
}

nlohmann::ordered_json dump_json(const Interpreter& interpreter, pid_t pid,
                                 const std::vector<ThreadStack>& threads) {
  nlohmann::ordered_json j;
  j["schema"] = "dltune.stacks/1";
  j["pid"] = pid;
  j["python"] = version_text(interpreter);
  j["interpreter"] = interpreter.path;
  auto& list = j["threads"] = nlohmann::ordered_json::array();
  for (const auto& t : threads) {
    nlohmann::ordered_json thread;
    thread["thread_id"] = t.thread_id;
    thread["native_id"] = t.native_id;
    thread["truncated"] = t.truncated;
    auto& frames = thread["frames"] = nlohmann::ordered_json::array();
    for (const auto& f : t.frames)
      frames.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}});
    list.push_back(std::move(thread));
  }
  return j;
}

void StackCounts::add(const std::vector<ThreadStack>& sample) {
  ++samples_;
  for (const auto& t : sample) {
    if (t.frames.empty()) continue;  // idle in C: nothing to count
    std::vector<Frame> outer_first(t.frames.rbegin(), t.frames.rend());
    ++counts_[t.native_id][std::move(outer_first)];
  }
}

void StackCounts::add_counted(std::uint64_t tid, const std::vector<Frame>& innermost_first,
                              std::uint64_t count) {
  samples_ += count;
  if (innermost_first.empty() || count == 0) return;
  std::vector<Frame> outer_first(innermost_first.rbegin(), innermost_first.rend());
  counts_[tid][std::move(outer_first)] += count;
}

std::string StackCounts::collapsed() const {
  std::string out;
  for (const auto& [tid, stacks] : counts_) {
    for (const auto& [frames, count] : stacks) {
      out += fmt::format("thread {}", tid);
      for (const auto& f : frames) {
        auto text = frame_text(f);
        // flamegraph.pl splits frames on ';' and the count on the last space.
        for (auto& c : text)
          if (c == ';' || c == '\n') c = ',';
        out += ';' + text;
      }
      out += fmt::format(" {}\n", count);
    }
  }
  return out;
}

nlohmann::ordered_json StackCounts::speedscope(const std::string& name) const {
  nlohmann::ordered_json j;
  j["$schema"] = "https://www.speedscope.app/file-format-schema.json";
  j["name"] = name;
  j["exporter"] = "dltune stacks";
  std::map<Frame, std::size_t> index;
  auto frames = nlohmann::ordered_json::array();
  auto profiles = nlohmann::ordered_json::array();
  for (const auto& [tid, stacks] : counts_) {
    auto samples = nlohmann::ordered_json::array();
    auto weights = nlohmann::ordered_json::array();
    std::uint64_t total = 0;
    for (const auto& [stack, count] : stacks) {
      auto ids = nlohmann::ordered_json::array();
      for (const auto& f : stack) {
        auto [it, added] = index.emplace(f, index.size());
        if (added) frames.push_back({{"name", f.function}, {"file", f.file}, {"line", f.line}});
        ids.push_back(it->second);
      }
      samples.push_back(std::move(ids));
      weights.push_back(count);
      total += count;
    }
    profiles.push_back({{"type", "sampled"},
                        {"name", fmt::format("thread {}", tid)},
                        {"unit", "none"},
                        {"startValue", 0},
                        {"endValue", total},
                        {"samples", std::move(samples)},
                        {"weights", std::move(weights)}});
  }
  j["shared"] = {{"frames", std::move(frames)}};
  j["profiles"] = std::move(profiles);
  return j;
}

}  // namespace dltune::pystack
