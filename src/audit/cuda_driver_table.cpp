#include "audit/cuda_driver_table.hpp"
#include "core/toml_parse.hpp"

#include <algorithm>

#include <fmt/core.h>

#include <toml++/toml.h>

#include "core/embedded.hpp"
#include "core/text.hpp"

namespace dltune::audit {

namespace {

std::optional<std::vector<std::uint64_t>> numbers(std::string_view v) {
  std::vector<std::uint64_t> out;
  for (const auto part : text::split(v, '.')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    const auto n = text::to_uint(part);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string row_name(std::string_view table, std::size_t i) {
  return fmt::format("cuda-driver.toml: [[{}]] #{}", table, i + 1);
}

// A string field that must be there and not empty.
Result<std::string> field(const toml::table& t, std::string_view key, const std::string& row) {
  const auto v = t[key].value<std::string>();
  if (!v || v->empty()) return fail(fmt::format("missing or empty '{}' (a string) in", key), row);
  return *v;
}

Result<void> check_driver(const std::string& driver, const std::string& row) {
  if (!numbers(driver)) return fail(fmt::format("'{}' is not a driver version in", driver), row);
  return {};
}

Result<CudaDriverTable> read_table(const toml::table& doc) {
  CudaDriverTable table;
  const auto* compat = doc["minor_compat"].as_array();
  const auto* toolkits = doc["toolkit"].as_array();
  if (!compat || !toolkits)
    return fail("expected arrays of tables [[minor_compat]] and [[toolkit]] in",
                "cuda-driver.toml");

  for (std::size_t i = 0; i < compat->size(); ++i) {
    const auto row = row_name("minor_compat", i);
    const auto* t = (*compat)[i].as_table();
    if (!t) return fail("not a table:", row);
    MinorCompatDriver m;
    const auto* major = (*t)["major"].as_integer();  // not value<>: see kernel_events.cpp
    if (major == nullptr || major->get() < 1 || major->get() > 99)
      return fail("missing or absurd 'major' in", row);
    m.major = static_cast<int>(major->get());
    auto driver = field(*t, "driver", row);
    if (!driver) return tl::unexpected(driver.error());
    m.driver = *driver;
    if (auto ok = check_driver(m.driver, row); !ok) return tl::unexpected(ok.error());
    auto source = field(*t, "source", row);
    if (!source) return tl::unexpected(source.error());
    m.source = *source;
    if (!table.minor_compat.empty() && table.minor_compat.back().major >= m.major)
      return fail("majors must increase, row", row);
    table.minor_compat.push_back(std::move(m));
  }

  for (std::size_t i = 0; i < toolkits->size(); ++i) {
    const auto row = row_name("toolkit", i);
    const auto* t = (*toolkits)[i].as_table();
    if (!t) return fail("not a table:", row);
    ToolkitDriver k;
    auto cuda = field(*t, "cuda", row);
    if (!cuda) return tl::unexpected(cuda.error());
    const auto v = parse_cuda_version(*cuda);
    if (!v || std::count(cuda->begin(), cuda->end(), '.') != 1)
      return fail(fmt::format("'{}' is not a CUDA version (\"12.1\") in", *cuda), row);
    k.cuda = *v;
    for (auto [key, out] : {std::pair{"release", &k.release}, std::pair{"driver", &k.driver},
                            std::pair{"source", &k.source}}) {
      auto s = field(*t, key, row);
      if (!s) return tl::unexpected(s.error());
      *out = *s;
    }
    k.updates = (*t)["updates"].value_or(std::string{});
    if (auto ok = check_driver(k.driver, row); !ok) return tl::unexpected(ok.error());
    if (!table.toolkits.empty()) {
      const auto& prev = table.toolkits.back();
      if (prev.cuda >= k.cuda) return fail("CUDA versions must increase, row", row);
      if (*compare_driver_versions(prev.driver, k.driver) == std::strong_ordering::greater)
        return fail("drivers must not decrease with the CUDA version, row", row);
    }
    table.toolkits.push_back(std::move(k));
  }
  return table;
}

}  // namespace

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
  const auto n = numbers(text::trim(text));
  if (!n || n->size() < 2 || n->size() > 3 || (*n)[0] > 99 || (*n)[1] > 99) return std::nullopt;
  return CudaVersion{static_cast<int>((*n)[0]), static_cast<int>((*n)[1])};
}

std::optional<std::strong_ordering> compare_driver_versions(std::string_view a,
                                                            std::string_view b) {
  const auto x = numbers(text::trim(a));
  const auto y = numbers(text::trim(b));
  if (!x || !y) return std::nullopt;
  for (std::size_t i = 0; i < std::max(x->size(), y->size()); ++i) {
    const std::uint64_t p = i < x->size() ? (*x)[i] : 0;
    const std::uint64_t q = i < y->size() ? (*y)[i] : 0;
    if (p != q) return p <=> q;
  }
  return std::strong_ordering::equal;
}

const ToolkitDriver* CudaDriverTable::toolkit(CudaVersion v) const {
  for (const auto& k : toolkits)
    if (k.cuda == v) return &k;
  return nullptr;
}

const MinorCompatDriver* CudaDriverTable::compat(int major) const {
  for (const auto& m : minor_compat)
    if (m.major == major) return &m;
  return nullptr;
}

Result<CudaDriverTable> parse_cuda_driver_table(std::string_view toml_text) {
  auto doc = parse_toml(toml_text, "cuda-driver.toml");
  if (!doc) return tl::unexpected(doc.error());
  return read_table(*doc);
}

std::string_view builtin_cuda_driver_toml() {
  return knowledge_text("cuda-driver").value_or(std::string_view());
}

const Result<CudaDriverTable>& builtin_cuda_driver_table() {
  static const Result<CudaDriverTable> kTable = load_knowledge<CudaDriverTable>(
      "cuda-driver",
      [](std::string_view text, const std::string&) { return parse_cuda_driver_table(text); });
  return kTable;
}

}  // namespace dltune::audit
