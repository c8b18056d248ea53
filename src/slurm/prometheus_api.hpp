#pragma once
// Prometheus's HTTP query API (https://prometheus.io/docs/prometheus/latest/querying/api/):
// instant queries (/api/v1/query) and range queries (/api/v1/query_range), for `dltune slurm
// report`. The requests go through the HTTP module's client (serve/http_client.hpp).
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "serve/http_client.hpp"

namespace dltune::slurm {

// One series of an instant query's vector: its labels and value.
struct PromSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};
// One series of a range query's matrix: its labels and its (unix seconds, value) points.
struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> points;
};

class PrometheusApi {
 public:
  // `url`: where Prometheus answers (its --web.external-url, with any route prefix). Errors: a
  // bad URL (bad input), or the HTTP module cannot be loaded.
  [[nodiscard]] static Result<PrometheusApi> open(const std::string& url,
                                                  std::chrono::milliseconds timeout,
                                                  std::string ca_file = {});
  // The query's vector at `at` (unix seconds). An error names the URL, the query and what
  // Prometheus said (a bad query, an answer that is not its API's).
  [[nodiscard]] Result<std::vector<PromSample>> query(const std::string& promql, double at) const;
  // The query's matrix from `start` to `end` every `step` seconds.
  [[nodiscard]] Result<std::vector<PromSeries>> query_range(const std::string& promql, double start,
                                                            double end, double step) const;
  [[nodiscard]] const serve::HttpUrl& url() const { return url_; }

  // The body of an answer parsed as the API's JSON ({"status":"success","data":{...}}): its
  // "data" object as text; an error with Prometheus's own "error" text, or naming what the
  // body was when it is not the API's. `status`: the HTTP status. Exposed for the tests.
  [[nodiscard]] static Result<std::vector<PromSample>> parse_vector(int status,
                                                                    const std::string& body);
  [[nodiscard]] static Result<std::vector<PromSeries>> parse_matrix(int status,
                                                                    const std::string& body);

 private:
  [[nodiscard]] Result<serve::HttpReply> get(
      const char* path, std::vector<std::pair<std::string, std::string>> params) const;
  serve::HttpUrl url_;
  std::chrono::milliseconds timeout_{10000};
  std::string ca_file_;
  serve::HttpGetFn get_ = nullptr;
};

}  // namespace dltune::slurm
