#include "host/fault.hpp"

#include <fnmatch.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::host {

namespace {

constexpr std::array<std::pair<FaultOp, std::string_view>, 11> kOpNames = {{
    {FaultOp::kRead, "read"},
    {FaultOp::kWriteVirtualOpen, "write_virtual.open"},
    {FaultOp::kWriteVirtual, "write_virtual"},
    {FaultOp::kAtomicOpen, "write_atomic.open"},
    {FaultOp::kAtomicWrite, "write_atomic.write"},
    {FaultOp::kAtomicShortWrite, "write_atomic.short_write"},
    {FaultOp::kAtomicFsync, "write_atomic.fsync"},
    {FaultOp::kAtomicRename, "write_atomic.rename"},
    {FaultOp::kRemove, "remove_file"},
    {FaultOp::kMakeDirectory, "make_directory"},
    {FaultOp::kShortRead, "read.short"},
}};

Result<Fault> parse_one(std::string_view entry) {
  const auto bad = [&](const std::string& why) {
    return fail(fmt::format("{}: {} in", kFaultHookVariable, why), fmt::format("'{}'", entry));
  };
  const auto first = entry.find(':');
  if (first == std::string_view::npos) return bad("expected OP:PATH:ERRNO[:N]");
  Fault f;
  const auto op = fault_op_from_name(entry.substr(0, first));
  if (!op) {
    std::string known;
    for (const auto& [o, name] : kOpNames) known += (known.empty() ? "" : ", ") + std::string(name);
    return bad(fmt::format("unknown operation '{}' (known: {})", entry.substr(0, first), known));
  }
  f.op = *op;
  std::string_view rest = entry.substr(first + 1);
  auto last = rest.rfind(':');
  if (last == std::string_view::npos) return bad("expected OP:PATH:ERRNO[:N]");
  std::string_view tail = rest.substr(last + 1);
  if (!tail.empty() && tail.find_first_not_of("0123456789") == std::string_view::npos) {
    const auto n = text::to_int(tail);
    if (!n || *n < 1 || *n > 1000000) return bad("N must be a positive integer");
    f.nth = static_cast<int>(*n);
    rest = rest.substr(0, last);
    last = rest.rfind(':');
    if (last == std::string_view::npos) return bad("expected OP:PATH:ERRNO[:N]");
    tail = rest.substr(last + 1);
  }
  const auto err = errno_from_name(tail);
  if (!err) return bad(fmt::format("unknown errno name '{}' (EIO, ENOSPC, EROFS, ...)", tail));
  f.err = *err;
  f.path = std::string(rest.substr(0, last));
  if (f.path.empty() || f.path[0] != '/') return bad("the path must be absolute");
  return f;
}

}  // namespace

std::string_view fault_op_name(FaultOp op) {
  for (const auto& [o, name] : kOpNames)
    if (o == op) return name;
  return "?";
}

std::optional<FaultOp> fault_op_from_name(std::string_view name) {
  for (const auto& [o, n] : kOpNames)
    if (n == name) return o;
  return std::nullopt;
}

std::optional<int> errno_from_name(std::string_view name) {
  if (name.size() < 2 || name[0] != 'E') return std::nullopt;
  for (int e = 1; e < 4096; ++e) {
    const char* n = ::strerrorname_np(e);  // glibc 2.32
    if (n != nullptr && name == n) return e;
  }
  return std::nullopt;
}

Result<std::vector<Fault>> parse_faults(std::string_view spec) {
  std::vector<Fault> out;
  for (const auto entry : text::split(spec, ';')) {
    const auto trimmed = text::trim(entry);
    if (trimmed.empty()) continue;
    auto f = parse_one(trimmed);
    if (!f) return tl::unexpected(f.error());
    out.push_back(std::move(*f));
  }
  return out;
}

void FaultTable::add(Fault f) {
  std::lock_guard lock(mu_);
  entries_.push_back(Entry{std::move(f), 0});
}

void FaultTable::clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

int FaultTable::check(FaultOp op, std::string_view path) {
  const std::string p(path);
  std::lock_guard lock(mu_);
  for (auto& e : entries_) {
    if (e.fault.op != op || ::fnmatch(e.fault.path.c_str(), p.c_str(), 0) != 0) continue;
    ++e.calls;
    if (e.fault.nth == 0 || e.calls == e.fault.nth) {
      ++fired_;
      return e.fault.err;
    }
  }
  return 0;
}

int FaultTable::fired() const {
  std::lock_guard lock(mu_);
  return fired_;
}

namespace {

std::shared_ptr<FaultTable>& process_table() {
  static std::shared_ptr<FaultTable> table;
  return table;
}

}  // namespace

std::shared_ptr<FaultTable> process_faults() {
  return process_table();
}

void set_process_faults(std::shared_ptr<FaultTable> table) {
  process_table() = std::move(table);
}

Result<std::shared_ptr<FaultTable>> faults_from_environment() {
  const char* spec = std::getenv(kFaultHookVariable);
  if (spec == nullptr) return std::shared_ptr<FaultTable>();
  auto faults = parse_faults(spec);
  if (!faults) return tl::unexpected(faults.error());
  if (faults->empty()) return std::shared_ptr<FaultTable>();
  auto t = std::make_shared<FaultTable>();
  for (auto& f : *faults) t->add(std::move(f));
  return t;
}

}  // namespace dltune::host
