#include "host/parse/cuda_files.hpp"

#include <cctype>
#include <regex>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "host/parse/c_header.hpp"

namespace dltune::host::parse {

namespace {

using Defines = std::map<std::string, Define, std::less<>>;

bool is_version(std::string_view v) {
  if (v.empty() || v.front() == '.' || v.back() == '.') return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '.' && v[i + 1] == '.') return false;
    if (c != '.' && std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// The integer value of a macro; nullopt when absent; error when present and not a number.
// Integer literal suffixes (13000U, 13000L) are accepted.
Result<std::optional<std::uint64_t>> number(const Defines& d, std::string_view name) {
  const auto it = d.find(name);
  if (it == d.end()) return std::optional<std::uint64_t>();
  std::string_view v = it->second.value;
  while (v.size() > 1 && v.front() == '(' && v.back() == ')')
    v = text::trim(v.substr(1, v.size() - 2));
  while (!v.empty() && (v.back() == 'U' || v.back() == 'u' || v.back() == 'L' || v.back() == 'l'))
    v.remove_suffix(1);
  const auto n = text::to_uint(v);
  if (!n)
    return fail(
        fmt::format("line {}: {} is not a number: '{}'", it->second.line, name, it->second.value));
  return std::optional<std::uint64_t>(*n);
}

}  // namespace

Result<std::optional<std::string>> cuda_version_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return fail("not JSON");
  if (!j.is_object()) return fail("not a JSON object");
  const auto cuda = j.find("cuda");
  if (cuda == j.end() || !cuda->is_object()) return std::optional<std::string>();
  const auto v = cuda->find("version");
  if (v == cuda->end()) return std::optional<std::string>();
  if (!v->is_string() || !is_version(v->get<std::string>()))
    return fail(fmt::format("\"cuda\".\"version\" is not a version: {}", v->dump()));
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::optional<std::string>> cuda_version_txt(std::string_view text) {
  int number = 0;
  for (const auto line : text::lines(text)) {
    ++number;
    const auto t = text::trim(line);
    if (!t.starts_with("CUDA Version")) continue;
    const auto f = text::fields(t);
    if (f.size() < 3 || !is_version(f[2]))
      return fail(fmt::format("line {}: expected 'CUDA Version X.Y.Z', got '{}'", number, t));
    return std::optional<std::string>(std::string(f[2]));
  }
  return std::optional<std::string>();
}

Result<std::optional<std::string>> cuda_h_version(std::string_view text) {
  const auto d = c_defines(text);
  auto v = number(d, "CUDA_VERSION");
  if (!v) return tl::unexpected(v.error());
  if (!*v) return std::optional<std::string>();
  // cuda.h: "CUDA API version number", 1000 * major + 10 * minor (12040 is 12.4).
  return std::optional<std::string>(fmt::format("{}.{}", **v / 1000, (**v % 1000) / 10));
}

Result<std::optional<std::string>> cudnn_h_version(std::string_view text) {
  const auto d = c_defines(text);
  auto major = number(d, "CUDNN_MAJOR");
  if (!major) return tl::unexpected(major.error());
  if (!*major) return std::optional<std::string>();
  auto minor = number(d, "CUDNN_MINOR");
  if (!minor) return tl::unexpected(minor.error());
  auto patch = number(d, "CUDNN_PATCHLEVEL");
  if (!patch) return tl::unexpected(patch.error());
  if (!*minor) return fail("CUDNN_MAJOR without CUDNN_MINOR");
  if (!*patch) return std::optional<std::string>(fmt::format("{}.{}", **major, **minor));
  return std::optional<std::string>(fmt::format("{}.{}.{}", **major, **minor, **patch));
}

Result<std::optional<std::string>> nccl_h_version(std::string_view text) {
  const auto d = c_defines(text);
  auto major = number(d, "NCCL_MAJOR");
  if (!major) return tl::unexpected(major.error());
  auto minor = number(d, "NCCL_MINOR");
  if (!minor) return tl::unexpected(minor.error());
  auto patch = number(d, "NCCL_PATCH");
  if (!patch) return tl::unexpected(patch.error());
  if (*major && *minor && *patch) {
    std::string suffix;
    if (const auto s = d.find("NCCL_SUFFIX"); s != d.end()) suffix = text::unquote(s->second.value);
    return std::optional<std::string>(fmt::format("{}.{}.{}{}", **major, **minor, **patch, suffix));
  }
  auto code = number(d, "NCCL_VERSION_CODE");
  if (!code) return tl::unexpected(code.error());
  if (!*code) {
    if (*major) return fail("NCCL_MAJOR without NCCL_MINOR and NCCL_PATCH");
    return std::optional<std::string>();
  }
  // nccl.h NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
  const auto c = **code;
  if (c >= 20900)
    return std::optional<std::string>(
        fmt::format("{}.{}.{}", c / 10000, (c % 10000) / 100, c % 100));
  return std::optional<std::string>(fmt::format("{}.{}.{}", c / 1000, (c % 1000) / 100, c % 100));
}

std::optional<std::string> library_version(std::string_view file_name, std::string_view stem) {
  if (!file_name.starts_with(stem)) return std::nullopt;
  auto rest = file_name.substr(stem.size());
  if (!rest.starts_with(".so")) return std::nullopt;
  rest.remove_prefix(3);
  if (rest.empty()) return std::string();
  if (rest[0] != '.') return std::nullopt;
  rest.remove_prefix(1);
  if (!is_version(rest)) return std::nullopt;
  return std::string(rest);
}

std::optional<std::string> openblas_version(std::string_view file_name) {
  // A file name is at most NAME_MAX (255) bytes; libstdc++'s std::regex recurses once per
  // character and a 44 KB "name" overflowed the stack (found by fuzz_versions).
  if (file_name.size() > 255) return std::nullopt;
  if (!file_name.starts_with("libopenblas") && !file_name.starts_with("libscipy_openblas"))
    return std::nullopt;
  if (file_name.find(".so") == std::string_view::npos) return std::nullopt;
  // A release is written "-r0.3.21" by OpenBLAS's Makefile (LIBPREFIX-rVERSION).
  static const std::regex kRelease(R"(-r(\d+\.\d+\.\d+))");
  std::cmatch m;
  if (std::regex_search(file_name.data(), file_name.data() + file_name.size(), m, kRelease))
    return m[1].str();
  return std::string();
}

int version_precision(std::string_view version) {
  if (version.empty()) return 0;
  return static_cast<int>(text::split(version, '.').size());
}

}  // namespace dltune::host::parse
