#include "launch/kernel_log.hpp"

namespace dltune::launch {

OomWatch::OomWatch(const host::Root& root) {
  if (auto r = host::KmsgReader::open(root, host::KmsgReader::Start::kEnd)) reader_ = std::move(*r);
}

std::vector<host::parse::OomKill> OomWatch::victims(const std::string& cgroup_name) {
  std::vector<host::parse::OomKill> out;
  const std::string suffix = "/dltune/" + cgroup_name;
  for (const auto& record : reader_.read_available(100000).records) {
    auto kill = host::parse::oom_kill(record.text);
    if (kill && kill->task_memcg.ends_with(suffix)) out.push_back(std::move(*kill));
  }
  return out;
}

}  // namespace dltune::launch
