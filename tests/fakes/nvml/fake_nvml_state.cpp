#include "fake_nvml_state.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fake_nvml {

namespace {

using json = nlohmann::json;

const char* state_path() {
  return std::getenv("FAKE_NVML_STATE");
}

json load(const char* path) {
  std::ifstream in(path);
  if (!in) return json::object();
  std::stringstream buf;
  buf << in.rdbuf();
  auto j = json::parse(buf.str(), nullptr, false);
  return j.is_object() ? j : json::object();
}

}  // namespace

std::optional<bool> stored(const std::string& uuid, const char* field) {
  const char* path = state_path();
  if (path == nullptr) return std::nullopt;
  const auto j = load(path);
  if (!j.contains(uuid) || !j[uuid].is_object() || !j[uuid].contains(field)) return std::nullopt;
  const auto& v = j[uuid][field];
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<long long>() != 0;
  return std::nullopt;
}

bool store(const std::string& uuid, const char* field, bool value) {
  const char* path = state_path();
  if (path == nullptr) return true;
  auto j = load(path);
  if (!j.contains(uuid) || !j[uuid].is_object()) j[uuid] = json::object();
  j[uuid][field] = value;
  const std::string tmp = std::string(path) + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << '\n';
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path) == 0;
}

}  // namespace fake_nvml
