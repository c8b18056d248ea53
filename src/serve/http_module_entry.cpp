// The one symbol the HTTP module exports (http_module.hpp); everything else in it is hidden.
#include "serve/http_module.hpp"

extern "C" __attribute__((visibility("default"))) const dltune::serve::HttpModule*
dltune_serve_http_module() {
  static const dltune::serve::HttpModule kModule{
      dltune::serve::http_module_layout(), &dltune::serve::bind_metrics_server,
      &dltune::serve::load_web_config, &dltune::serve::http_get};
  return &kModule;
}
