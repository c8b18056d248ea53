#include "slurm/prometheus_api.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

#include "core/json.hpp"
#include "serve/http_module.hpp"

namespace dltune::slurm {

namespace {

// A sample value as the API writes it: a string ("1.5", "NaN", "+Inf").
bool to_value(const Json& v, double& out) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

bool to_labels(const Json& metric, std::map<std::string, std::string>& out) {
  if (!metric.is_object()) return false;
  for (const auto& [k, v] : metric.items()) {
    if (!v.is_string()) return false;
    out.emplace(k, v.get<std::string>());
  }
  return true;
}

// The "data" of a successful answer of `type` ("vector", "matrix").
Result<Json> data_of(int status, const std::string& body, const char* type) {
  const auto j = Json::parse(body, nullptr, false);
  const auto first = body.substr(0, 120);
  if (j.is_discarded() || !j.is_object() || !j.contains("status"))
    return fail(
        fmt::format("the answer (HTTP {}) is not Prometheus's query API: '{}'", status, first));
  if (j["status"] != "success") {
    std::string error = j.contains("error") && j["error"].is_string()
                            ? j["error"].get<std::string>()
                            : std::string("(no error text)");
    return fail(fmt::format("Prometheus refused it (HTTP {}): {}", status, error));
  }
  if (!j.contains("data") || !j["data"].is_object() || j["data"].value("resultType", "") != type ||
      !j["data"].contains("result") || !j["data"]["result"].is_array())
    return fail(fmt::format("the answer has no {} result: '{}'", type, first));
  return j["data"]["result"];
}

}  // namespace

Result<PrometheusApi> PrometheusApi::open(const std::string& url, std::chrono::milliseconds timeout,
                                          std::string ca_file) {
  auto u = serve::parse_http_url(url);
  if (!u) return tl::unexpected(u.error());
  auto module = serve::http_module();
  if (!module) return tl::unexpected(module.error());
  PrometheusApi api;
  api.url_ = std::move(*u);
  api.timeout_ = timeout;
  api.ca_file_ = std::move(ca_file);
  api.get_ = (*module)->get;
  return api;
}

Result<serve::HttpReply> PrometheusApi::get(
    const char* path, std::vector<std::pair<std::string, std::string>> params) const {
  serve::HttpGet request;
  request.url = url_;
  request.path = path;
  request.params = std::move(params);
  request.timeout = timeout_;
  request.ca_file = ca_file_;
  return get_(request);
}

Result<std::vector<PromSample>> PrometheusApi::parse_vector(int status, const std::string& body) {
  auto result = data_of(status, body, "vector");
  if (!result) return tl::unexpected(result.error());
  std::vector<PromSample> out;
  for (const auto& r : *result) {
    PromSample s;
    if (!r.is_object() || !r.contains("metric") || !to_labels(r["metric"], s.labels) ||
        !r.contains("value") || !r["value"].is_array() || r["value"].size() != 2 ||
        !to_value(r["value"][1], s.value))
      return fail("an answer's sample is not {\"metric\": {...}, \"value\": [TIME, \"VALUE\"]}");
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<PromSeries>> PrometheusApi::parse_matrix(int status, const std::string& body) {
  auto result = data_of(status, body, "matrix");
  if (!result) return tl::unexpected(result.error());
  std::vector<PromSeries> out;
  for (const auto& r : *result) {
    PromSeries s;
    if (!r.is_object() || !r.contains("metric") || !to_labels(r["metric"], s.labels) ||
        !r.contains("values") || !r["values"].is_array())
      return fail("an answer's series is not {\"metric\": {...}, \"values\": [...]}");
    for (const auto& p : r["values"]) {
      double v = 0;
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !to_value(p[1], v))
        return fail("an answer's point is not [TIME, \"VALUE\"]");
      s.points.emplace_back(p[0].get<double>(), v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<PromSample>> PrometheusApi::query(const std::string& promql, double at) const {
  auto r = get("/api/v1/query", {{"query", promql}, {"time", fmt::format("{:.3f}", at)}});
  if (!r) return tl::unexpected(r.error());
  auto v = parse_vector(r->status, r->body);
  if (!v)
    return fail(fmt::format("{}: the query `{}`: {}", url_.text(), promql, v.error().message()));
  return v;
}

Result<std::vector<PromSeries>> PrometheusApi::query_range(const std::string& promql, double start,
                                                           double end, double step) const {
  auto r = get("/api/v1/query_range", {{"query", promql},
                                       {"start", fmt::format("{:.3f}", start)},
                                       {"end", fmt::format("{:.3f}", end)},
                                       {"step", fmt::format("{:.3f}", step)}});
  if (!r) return tl::unexpected(r.error());
  auto m = parse_matrix(r->status, r->body);
  if (!m)
    return fail(fmt::format("{}: the query `{}`: {}", url_.text(), promql, m.error().message()));
  return m;
}

}  // namespace dltune::slurm
