#include "host/parse/kmsg.hpp"

#include "core/text.hpp"

namespace dltune::host::parse {

std::optional<KmsgRecord> kmsg_record(std::string_view raw) {
  const auto semi = raw.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  const auto head = text::split(raw.substr(0, semi), ',');
  if (head.size() < 3) return std::nullopt;
  const auto prio = text::to_uint(head[0]);
  const auto seq = text::to_uint(head[1]);
  const auto usec = text::to_uint(head[2]);
  if (!prio || !seq || !usec) return std::nullopt;
  KmsgRecord r;
  r.priority = static_cast<int>(*prio & 7);
  r.facility = static_cast<int>(*prio >> 3);
  r.seq = *seq;
  r.usec = *usec;
  auto body = raw.substr(semi + 1);
  if (const auto nl = body.find('\n'); nl != std::string_view::npos) body = body.substr(0, nl);
  r.text = std::string(body);
  return r;
}

std::optional<OomKill> oom_kill(std::string_view text) {
  constexpr std::string_view kTag = "oom-kill:";
  const auto at = text.find(kTag);
  if (at == std::string_view::npos) return std::nullopt;
  OomKill k;
  bool have_pid = false, have_task = false;
  for (const auto field : text::split(text::trim(text.substr(at + kTag.size())), ',')) {
    const auto eq = field.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = field.substr(0, eq);
    const auto value = field.substr(eq + 1);
    if (key == "constraint") {
      k.constraint = value;
    } else if (key == "oom_memcg") {
      k.oom_memcg = value;
    } else if (key == "task_memcg") {
      k.task_memcg = value;
    } else if (key == "task") {
      k.task = value;
      have_task = true;
    } else if (key == "pid") {
      const auto pid = text::to_uint(value);
      if (!pid) return std::nullopt;
      k.pid = static_cast<int>(*pid);
      have_pid = true;
    } else if (key == "uid") {
      if (const auto uid = text::to_uint(value)) k.uid = static_cast<int>(*uid);
    }
  }
  if (!have_pid || !have_task) return std::nullopt;
  return k;
}

}  // namespace dltune::host::parse
