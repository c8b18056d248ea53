#pragma once
// What `dltune stacks` prints: one dump of every thread (text or JSON, like `py-spy dump`), or
// the samples of a window as collapsed stacks (flamegraph.pl's input) or speedscope's JSON.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pystack/process.hpp"
#include "pystack/walk.hpp"

namespace dltune::pystack {

// "3.11.2", or "3.11" where only the file name said the version.
[[nodiscard]] std::string version_text(const Interpreter& interpreter);

// "Thread 0x7f... (native 1234)", then "    function (file:line)" innermost first.
[[nodiscard]] std::string dump_text(const Interpreter& interpreter, pid_t pid,
                                    const std::vector<ThreadStack>& threads);
[[nodiscard]] nlohmann::ordered_json dump_json(const Interpreter& interpreter, pid_t pid,
                                               const std::vector<ThreadStack>& threads);

// The samples of a window, each thread's stacks counted.
class StackCounts {
 public:
  void add(const std::vector<ThreadStack>& sample);
  // `count` samples of one stack (innermost first) of thread `tid`: a recording's counts.
  void add_counted(std::uint64_t tid, const std::vector<Frame>& innermost_first,
                   std::uint64_t count);
  // "thread 1234;outer (file:line);...;inner (file:line) COUNT" lines, sorted.
  [[nodiscard]] std::string collapsed() const;
  // speedscope's file format (https://www.speedscope.app/file-format-schema.json): one sampled
  // profile per thread.
  [[nodiscard]] nlohmann::ordered_json speedscope(const std::string& name) const;
  [[nodiscard]] std::uint64_t samples() const { return samples_; }

 private:
  // Per native thread id, each stack (outermost first) and its count.
  std::map<std::uint64_t, std::map<std::vector<Frame>, std::uint64_t>> counts_;
  std::uint64_t samples_ = 0;
};

}  // namespace dltune::pystack
