#include "serve/serve_choices.hpp"

#include "serve/http_module.hpp"
#include "serve/listen.hpp"

namespace dltune::serve {

namespace {

std::string variable(const std::map<std::string, std::string>& environment, const char* name) {
  const auto it = environment.find(name);
  return it != environment.end() ? it->second : "";
}

}  // namespace

tl::expected<ServeSetup, Failure> setup_serve(
    const host::Root& root, ServeChoices choices, uid_t euid,
    const std::map<std::string, std::string>& environment) {
  choices.exporter.gpus = !choices.no_gpus;
  choices.exporter.nvml_library = variable(environment, "DLTUNE_NVML_LIBRARY");
  choices.exporter.node_name = variable(environment, "NODE_NAME");
  ServeSetup setup;
  auto options = exporter_options(root, choices.exporter);
  if (!options) return refused(options.error());
  setup.options = std::move(*options);
  if (choices.no_host_metrics) setup.options.host = HostFamilies::kBeyondNodeExporter;
  auto address = parse_listen(choices.listen);
  if (!address) return refused(address.error());
  setup.request.address = *address;
  if (!choices.web_config.empty()) {
    auto module = http_module();
    if (!module) return tl::unexpected(Failure{false, module.error()});
    auto loaded = (*module)->load_web_config(choices.web_config);
    if (!loaded) return refused(loaded.error());
    setup.request.web = std::move(*loaded);
  }
  if (choices.once) return setup;
  if (choices.json) return refused("--json goes with --once (a scrape is always the text format)");
  setup.request.limits.workers = static_cast<std::size_t>(choices.max_connections);
  if (choices.per_address > 0)
    setup.request.limits.connections_per_address = static_cast<std::size_t>(choices.per_address);
  auto who =
      choose_identity(euid, choices.user, choices.as_root, variable(environment, "SUDO_USER"));
  if (!who) return refused(who.error());
  setup.request.become = who->become;
  setup.warning = who->warning;
  return setup;
}

}  // namespace dltune::serve
