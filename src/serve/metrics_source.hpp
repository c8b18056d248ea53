#pragma once
// What the HTTP server asks of the exporter: the latest exposition, the scrape counter and the
// health. An interface, so that the server (in the HTTP module, http_module.hpp) calls into the
// program only through it.
#include <cstdint>
#include <memory>
#include <string>

namespace dltune::serve {

// The text exposition of one sample, published whole (readers share it, nothing copies it).
struct Exposition {
  std::string text;
  std::int64_t sampled_monotonic_ns = 0;
};

struct Health {
  bool ok = false;
  std::string why;  // "ok", or what is wrong
};

class MetricsSource {
 public:
  virtual ~MetricsSource() = default;
  // The latest exposition, or null before the first sample.
  [[nodiscard]] virtual std::shared_ptr<const Exposition> exposition() const = 0;
  // Counts a scrape and renders the one family that changes with each, the scrape counter, in
  // the text format (it follows the published exposition in the response).
  [[nodiscard]] virtual std::string count_scrape_text() = 0;
  [[nodiscard]] virtual Health health() const = 0;
};

}  // namespace dltune::serve
