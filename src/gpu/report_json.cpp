#include "gpu/report_json.hpp"
#include "core/json.hpp"

#include <limits>

#include <fmt/core.h>

namespace dltune::gpu {

namespace {

template <class T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

Json strings(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

// Reads the fields of an object, keeping what has the right type and naming what has not.
class ReportReader {
 public:
  ReportReader(const Json& j, std::string where, std::vector<std::string>& issues)
      : j_(j), where_(std::move(where)), issues_(issues) {}

  const Json* find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  void bad(const char* key, const char* expected) {
    issues_.push_back(fmt::format("{}{}: expected {}", where_, key, expected));
  }
  void get(const char* key, std::optional<std::string>& out) {
    if (const auto* v = find(key)) {
      if (v->is_string())
        out = v->get<std::string>();
      else
        bad(key, "a string");
    }
  }
  void get(const char* key, std::string& out) {
    std::optional<std::string> v;
    get(key, v);
    if (v) out = *v;
  }
  void get(const char* key, std::optional<bool>& out) {
    if (const auto* v = find(key)) {
      if (v->is_boolean())
        out = v->get<bool>();
      else
        bad(key, "true or false");
    }
  }
  void get(const char* key, std::optional<std::uint64_t>& out) {
    if (const auto* v = find(key)) {
      if (v->is_number_unsigned())
        out = v->get<std::uint64_t>();
      else
        bad(key, "an unsigned integer");
    }
  }
  void get(const char* key, std::optional<std::uint32_t>& out) {
    std::optional<std::uint64_t> v;
    get(key, v);
    if (v && *v > std::numeric_limits<std::uint32_t>::max())
      bad(key, "a 32-bit unsigned integer");
    else if (v)
      out = static_cast<std::uint32_t>(*v);
  }
  void get(const char* key, std::optional<double>& out) {
    if (const auto* v = find(key)) {
      if (v->is_number())
        out = v->get<double>();
      else
        bad(key, "a number");
    }
  }
  void get(const char* key, std::vector<std::string>& out) {
    if (const auto* v = find(key)) {
      if (!v->is_array()) return bad(key, "an array of strings");
      for (const auto& s : *v)
        if (s.is_string()) out.push_back(s.get<std::string>());
    }
  }
  // An object or array member, or nullptr (with an issue when it has another type).
  const Json* member(const char* key, bool array) {
    const auto* v = find(key);
    if (v == nullptr) return nullptr;
    if (array ? v->is_array() : v->is_object()) return v;
    bad(key, array ? "an array" : "an object");
    return nullptr;
  }
  const std::string& where() const { return where_; }
  std::vector<std::string>& issues() { return issues_; }

 private:
  const Json& j_;
  std::string where_;
  std::vector<std::string>& issues_;
};

Device device_from_json(const Json& j, std::string where, std::vector<std::string>& issues) {
  Device d;
  ReportReader r(j, where, issues);
  std::optional<std::uint32_t> index;
  r.get("index", index);
  d.index = index.value_or(0);
  r.get("name", d.name);
  r.get("uuid", d.uuid);
  r.get("pci_bus_id", d.pci_bus_id);
  r.get("memory_total_bytes", d.memory_total_bytes);
  r.get("memory_used_bytes", d.memory_used_bytes);
  r.get("persistence_mode", d.persistence_mode);
  if (const auto* e = r.member("ecc", false)) {
    ReportReader er(*e, where + "ecc.", issues);
    er.get("enabled", d.ecc_enabled);
    er.get("pending_enabled", d.ecc_pending_enabled);
    er.get("volatile_corrected", d.ecc_errors.volatile_corrected);
    er.get("volatile_uncorrected", d.ecc_errors.volatile_uncorrected);
    er.get("aggregate_corrected", d.ecc_errors.aggregate_corrected);
    er.get("aggregate_uncorrected", d.ecc_errors.aggregate_uncorrected);
  }
  if (const auto* rr = r.member("row_remap", false)) {
    ReportReader rm(*rr, where + "row_remap.", issues);
    std::optional<std::uint32_t> corr, unc;
    std::optional<bool> pending, failure;
    rm.get("corrected_rows", corr);
    rm.get("uncorrected_rows", unc);
    rm.get("pending", pending);
    rm.get("failure", failure);
    if (corr && unc && pending && failure) d.row_remap = RowRemap{*corr, *unc, *pending, *failure};
  }
  if (const auto* rp = r.member("retired_pages", false)) {
    ReportReader pr(*rp, where + "retired_pages.", issues);
    pr.get("multiple_single_bit", d.retired_pages.multiple_single_bit);
    pr.get("double_bit", d.retired_pages.double_bit);
    pr.get("pending", d.retired_pages.pending);
    pr.get("failed", d.retired_pages.failed);
  }
  if (const auto* c = r.member("clocks", false)) {
    ReportReader cr(*c, where + "clocks.", issues);
    cr.get("sm_mhz", d.sm_clock_mhz);
    cr.get("memory_mhz", d.memory_clock_mhz);
    cr.get("max_sm_mhz", d.max_sm_clock_mhz);
    cr.get("max_memory_mhz", d.max_memory_clock_mhz);
    cr.get("app_sm_mhz", d.app_sm_clock_mhz);
    cr.get("app_memory_mhz", d.app_memory_clock_mhz);
    cr.get("default_app_sm_mhz", d.default_app_sm_clock_mhz);
    cr.get("default_app_memory_mhz", d.default_app_memory_clock_mhz);
  }
  if (const auto* m = r.member("mig", false)) {
    ReportReader mr(*m, where + "mig.", issues);
    mr.get("enabled", d.mig_enabled);
    mr.get("pending_enabled", d.mig_pending_enabled);
    if (const auto* list = mr.member("devices", true)) {
      std::size_t i = 0;
      for (const auto& md : *list) {
        const auto at = fmt::format("{}mig.devices[{}]", where, i++);
        if (!md.is_object()) {
          issues.push_back(at + ": expected an object");
          continue;
        }
        ReportReader dr(md, at + ".", issues);
        MigDevice mig;
        std::optional<std::uint32_t> index;
        dr.get("index", index);
        mig.index = index.value_or(0);
        dr.get("name", mig.name);
        dr.get("uuid", mig.uuid);
        dr.get("memory_total_bytes", mig.memory_total_bytes);
        dr.get("gpu_instance_id", mig.gpu_instance_id);
        dr.get("compute_instance_id", mig.compute_instance_id);
        d.mig_devices.push_back(std::move(mig));
      }
    }
  }
  if (const auto* c = r.member("clock_event_reasons", false)) {
    ReportReader cr(*c, where + "clock_event_reasons.", issues);
    cr.get("mask", d.clock_event_reasons);
  }
  if (const auto* p = r.member("pcie", false)) {
    ReportReader pr(*p, where + "pcie.", issues);
    pr.get("generation", d.pcie_generation);
    pr.get("width", d.pcie_width);
    pr.get("max_generation", d.pcie_max_generation);
    pr.get("max_width", d.pcie_max_width);
  }
  r.get("temperature_celsius", d.temperature_celsius);
  r.get("power_watts", d.power_watts);
  r.get("power_limit_watts", d.power_limit_watts);
  r.get("power_management_limit_watts", d.power_management_limit_watts);
  r.get("power_default_limit_watts", d.power_default_limit_watts);
  r.get("power_min_limit_watts", d.power_min_limit_watts);
  r.get("power_max_limit_watts", d.power_max_limit_watts);
  if (const auto* links = r.member("nvlinks", true)) {
    std::size_t i = 0;
    for (const auto& l : *links) {
      const auto at = fmt::format("{}nvlinks[{}]", where, i++);
      if (!l.is_object()) {
        issues.push_back(at + ": expected an object");
        continue;
      }
      ReportReader lr(l, at + ".", issues);
      std::optional<std::uint32_t> link;
      std::optional<bool> active;
      lr.get("link", link);
      lr.get("active", active);
      if (!link || !active) continue;
      NvLink nl;
      nl.link = *link;
      nl.active = *active;
      lr.get("remote_pci_bus_id", nl.remote_pci_bus_id);
      lr.get("version", nl.version);
      lr.get("remote_type", nl.remote_type);
      if (const auto* e = lr.member("errors", false)) {
        ReportReader er(*e, at + ".errors.", issues);
        er.get("replay", nl.replay_errors);
        er.get("recovery", nl.recovery_errors);
        er.get("crc_flit", nl.crc_flit_errors);
        er.get("crc_data", nl.crc_data_errors);
      }
      d.nvlinks.push_back(std::move(nl));
    }
  }
  r.get("errors", d.errors);
  return d;
}

}  // namespace

Json to_json(const Device& d) {
  Json j;
  j["index"] = d.index;
  put(j, "name", d.name);
  put(j, "uuid", d.uuid);
  put(j, "pci_bus_id", d.pci_bus_id);
  put(j, "memory_total_bytes", d.memory_total_bytes);
  put(j, "memory_used_bytes", d.memory_used_bytes);
  put(j, "persistence_mode", d.persistence_mode);
  Json ecc = Json::object();
  put(ecc, "enabled", d.ecc_enabled);
  put(ecc, "pending_enabled", d.ecc_pending_enabled);
  put(ecc, "volatile_corrected", d.ecc_errors.volatile_corrected);
  put(ecc, "volatile_uncorrected", d.ecc_errors.volatile_uncorrected);
  put(ecc, "aggregate_corrected", d.ecc_errors.aggregate_corrected);
  put(ecc, "aggregate_uncorrected", d.ecc_errors.aggregate_uncorrected);
  if (!ecc.empty()) j["ecc"] = std::move(ecc);
  if (const auto& rr = d.row_remap)
    j["row_remap"] = Json{{"corrected_rows", rr->corrected_rows},
                          {"uncorrected_rows", rr->uncorrected_rows},
                          {"pending", rr->pending},
                          {"failure", rr->failure}};
  Json pages = Json::object();
  put(pages, "multiple_single_bit", d.retired_pages.multiple_single_bit);
  put(pages, "double_bit", d.retired_pages.double_bit);
  put(pages, "pending", d.retired_pages.pending);
  put(pages, "failed", d.retired_pages.failed);
  if (!pages.empty()) j["retired_pages"] = std::move(pages);
  Json clocks = Json::object();
  put(clocks, "sm_mhz", d.sm_clock_mhz);
  put(clocks, "memory_mhz", d.memory_clock_mhz);
  put(clocks, "max_sm_mhz", d.max_sm_clock_mhz);
  put(clocks, "max_memory_mhz", d.max_memory_clock_mhz);
  put(clocks, "app_sm_mhz", d.app_sm_clock_mhz);
  put(clocks, "app_memory_mhz", d.app_memory_clock_mhz);
  put(clocks, "default_app_sm_mhz", d.default_app_sm_clock_mhz);
  put(clocks, "default_app_memory_mhz", d.default_app_memory_clock_mhz);
  if (!clocks.empty()) j["clocks"] = std::move(clocks);
  if (d.clock_event_reasons)
    j["clock_event_reasons"] =
        Json{{"mask", *d.clock_event_reasons},
             {"names", strings(clock_event_reason_names(*d.clock_event_reasons))}};
  Json pcie = Json::object();
  put(pcie, "generation", d.pcie_generation);
  put(pcie, "width", d.pcie_width);
  put(pcie, "max_generation", d.pcie_max_generation);
  put(pcie, "max_width", d.pcie_max_width);
  if (!pcie.empty()) j["pcie"] = std::move(pcie);
  put(j, "temperature_celsius", d.temperature_celsius);
  put(j, "power_watts", d.power_watts);
  put(j, "power_limit_watts", d.power_limit_watts);
  put(j, "power_management_limit_watts", d.power_management_limit_watts);
  put(j, "power_default_limit_watts", d.power_default_limit_watts);
  put(j, "power_min_limit_watts", d.power_min_limit_watts);
  put(j, "power_max_limit_watts", d.power_max_limit_watts);
  if (d.mig_enabled || d.mig_pending_enabled) {
    Json mig = Json::object();
    put(mig, "enabled", d.mig_enabled);
    put(mig, "pending_enabled", d.mig_pending_enabled);
    Json list = Json::array();
    for (const auto& m : d.mig_devices) {
      Json mj{{"index", m.index}};
      put(mj, "name", m.name);
      put(mj, "uuid", m.uuid);
      put(mj, "memory_total_bytes", m.memory_total_bytes);
      put(mj, "gpu_instance_id", m.gpu_instance_id);
      put(mj, "compute_instance_id", m.compute_instance_id);
      list.push_back(std::move(mj));
    }
    mig["devices"] = std::move(list);
    j["mig"] = std::move(mig);
  }
  Json links = Json::array();
  for (const auto& l : d.nvlinks) {
    Json lj{{"link", l.link}, {"active", l.active}};
    put(lj, "remote_pci_bus_id", l.remote_pci_bus_id);
    put(lj, "version", l.version);
    put(lj, "remote_type", l.remote_type);
    Json errors = Json::object();
    put(errors, "replay", l.replay_errors);
    put(errors, "recovery", l.recovery_errors);
    put(errors, "crc_flit", l.crc_flit_errors);
    put(errors, "crc_data", l.crc_data_errors);
    if (!errors.empty()) lj["errors"] = std::move(errors);
    links.push_back(std::move(lj));
  }
  j["nvlinks"] = std::move(links);
  j["errors"] = strings(d.errors);
  return j;
}

Json to_json(const Report& r) {
  Json j;
  j["loaded"] = r.loaded;
  j["library"] = r.library;
  put(j, "error", r.error);
  put(j, "driver_version", r.driver_version);
  put(j, "cuda_driver_version", r.cuda_driver_version);
  put(j, "nvml_version", r.nvml_version);
  put(j, "device_count", r.device_count);
  Json devices = Json::array();
  for (const auto& d : r.devices) devices.push_back(to_json(d));
  j["devices"] = std::move(devices);
  Json pairs = Json::array();
  for (const auto& p : r.topology) {
    Json pj{{"a", p.a}, {"b", p.b}, {"path", path_name(p)}, {"nvlinks", p.nvlinks}};
    put(pj, "level", p.level);
    put(pj, "p2p_nvlink", p.p2p_nvlink);
    put(pj, "p2p_read", p.p2p_read);
    pairs.push_back(std::move(pj));
  }
  j["topology"] = std::move(pairs);
  j["errors"] = strings(r.errors);
  return j;
}

ReportFromJson report_from_json(std::string_view text) {
  ReportFromJson out;
  out.report.backend = "nvml";
  const auto j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) {
    out.issues.push_back("not JSON");
    return out;
  }
  if (!j.is_object()) {
    out.issues.push_back("expected a JSON object");
    return out;
  }
  ReportReader r(j, "", out.issues);
  std::optional<bool> loaded;
  r.get("loaded", loaded);
  out.report.loaded = loaded.value_or(false);
  r.get("library", out.report.library);
  r.get("error", out.report.error);
  r.get("driver_version", out.report.driver_version);
  r.get("cuda_driver_version", out.report.cuda_driver_version);
  r.get("nvml_version", out.report.nvml_version);
  r.get("device_count", out.report.device_count);
  if (const auto* devices = r.member("devices", true)) {
    std::size_t i = 0;
    for (const auto& d : *devices) {
      const auto where = fmt::format("devices[{}]", i++);
      if (!d.is_object()) {
        out.issues.push_back(where + ": expected an object");
        continue;
      }
      out.report.devices.push_back(device_from_json(d, where + ".", out.issues));
    }
  }
  if (const auto* pairs = r.member("topology", true)) {
    std::size_t i = 0;
    for (const auto& p : *pairs) {
      const auto at = fmt::format("topology[{}]", i++);
      if (!p.is_object()) {
        out.issues.push_back(at + ": expected an object");
        continue;
      }
      ReportReader pr(p, at + ".", out.issues);
      std::optional<std::uint32_t> a, b, nvlinks, level;
      pr.get("a", a);
      pr.get("b", b);
      if (!a || !b) continue;
      GpuPair pair;
      pair.a = *a;
      pair.b = *b;
      pr.get("nvlinks", nvlinks);
      pair.nvlinks = nvlinks.value_or(0);
      pr.get("level", level);
      if (level) pair.level = static_cast<int>(*level);
      pr.get("p2p_nvlink", pair.p2p_nvlink);
      pr.get("p2p_read", pair.p2p_read);
      out.report.topology.push_back(pair);
    }
  }
  r.get("errors", out.report.errors);
  return out;
}

}  // namespace dltune::gpu
