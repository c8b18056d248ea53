#include "inventory/context.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace dltune::inventory {

const std::vector<std::string>& Context::environment_names() {
  static const std::vector<std::string> kNames = {
      "PATH", "HOME", "CUDA_HOME", "CUDA_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT",
      "PYENV_VERSION", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME",
      "OMP_NUM_THREADS",
      // check's env.training (audit/env_rules.cpp)
      "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
      "CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF", "LOCAL_WORLD_SIZE",
      // set inside Apptainer's and Singularity's containers (inventory/os.cpp)
      "APPTAINER_CONTAINER", "APPTAINER_NAME", "SINGULARITY_CONTAINER", "SINGULARITY_NAME"};
  return kNames;
}

Context::Context(const host::Root& root, std::map<std::string, std::string> environ)
    : root_(root), environ_(std::move(environ)) {}

std::optional<std::string> Context::env(std::string_view name) const {
  const auto it = environ_.find(std::string(name));
  if (it == environ_.end()) return std::nullopt;
  return it->second;
}

void Context::problem(std::string fact, std::string path, std::string reason) {
  for (const auto& p : problems_)
    if (p.fact == fact && p.path == path) return;  // once, not once per read
  problems_.push_back(Problem{std::move(fact), std::move(path), std::move(reason)});
}

std::optional<std::string> Context::read(std::string_view fact, std::string_view path,
                                         std::size_t max_bytes) {
  auto r = root_.read(path, max_bytes);
  if (!r) {
    problem(std::string(fact), std::string(path), r.error().message());
    return std::nullopt;
  }
  return std::move(*r);
}

std::optional<std::string> Context::read_required(std::string_view fact, std::string_view path) {
  auto r = read(fact, path);
  if (!r && std::none_of(problems_.begin(), problems_.end(),
                         [&](const Problem& p) { return p.fact == fact && p.path == path; }))
    problem(std::string(fact), std::string(path),
            root_.live() ? "missing" : "missing from this host tree");
  return r;
}

std::optional<std::string> Context::read_value(std::string_view fact, std::string_view path) {
  auto content = read(fact, path, 65536);
  if (!content) return std::nullopt;
  auto first = content->substr(0, content->find('\n'));
  return std::string(text::trim(first));
}

std::vector<std::string> Context::list(std::string_view fact, std::string_view path) {
  auto r = root_.list(path);
  if (!r) {
    problem(std::string(fact), std::string(path), r.error().message());
    return {};
  }
  return r->value_or(std::vector<std::string>{});
}

}  // namespace dltune::inventory
