#pragma once
// What a test that changes this host's settings records first and puts back at the end, whatever
// happens in between (integration tests, as root).
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dltune::testing {

inline const char* const kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
inline const char* const kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";

inline std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void put(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// The values of every path the training plan touches, and dltune's drop-in files: recorded at
// construction, put back at destruction whatever happened in between.
class HostValues {
 public:
  explicit HostValues(const std::vector<std::string>& paths) {
    for (const auto& p : paths) values_[p] = slurp(p);
    for (const char* f : {kSysctlDropin, kLimitsDropin}) files_[f] = slurp(f);
  }
  ~HostValues() {
    // Ratios before bytes (writing a ratio zeroes the bytes value); bytes=0 is never written.
    for (const auto& [p, v] : values_)
      if (v && p.find("_bytes") == std::string::npos) put(p, *v);
    for (const auto& [p, v] : values_)
      if (v && p.find("_bytes") != std::string::npos && *v != "0\n") put(p, *v);
    for (const auto& [f, v] : files_) {
      if (v)
        put(f, *v);
      else
        ::unlink(f.c_str());
    }
  }
  // Paths whose content differs from the recording.
  std::vector<std::string> changed() const {
    std::vector<std::string> out;
    for (const auto& [p, v] : values_)
      if (slurp(p) != v)
        out.push_back(p + ": was " + v.value_or("(absent)") + ", now " +
                      slurp(p).value_or("(absent)"));
    for (const auto& [f, v] : files_)
      if (slurp(f) != v) out.push_back(std::string(f) + " differs");
    return out;
  }

 private:
  std::map<std::string, std::optional<std::string>> values_;
  std::map<std::string, std::optional<std::string>> files_;
};

}  // namespace dltune::testing
