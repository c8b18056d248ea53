#pragma once
// The columns of a report, filled sample by sample (internal to report/: extract() drives it).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "monitor/sample.hpp"
#include "report/sections.hpp"
#include "report/series.hpp"

namespace dltune::report {

// Nanoseconds as the report's milliseconds (its charts' time axis).
[[nodiscard]] inline std::int64_t to_ms(std::int64_t ns) {
  return ns / 1'000'000;
}

class SeriesBuilder {
 public:
  // `samples`: the window's; `job_launched`: record started the job (its start and end are then
  // the recording's, not a main process appearing or going).
  SeriesBuilder(std::size_t samples, bool job_launched);
  ~SeriesBuilder();
  SeriesBuilder(const SeriesBuilder&) = delete;
  SeriesBuilder& operator=(const SeriesBuilder&) = delete;

  // Sample number k of the window, with the sample before it (null for the recording's first).
  void add(std::size_t k, const monitor::Sample& now, const monitor::Sample* previous);
  // Every series made, each with a value (or NaN) per sample of the window.
  [[nodiscard]] std::vector<Series> take_series();
  // OOM kills, Xid errors, a main process that appeared or went: in sample order.
  [[nodiscard]] std::vector<Marker> take_markers();
  // What was seen, for make_sections.
  [[nodiscard]] SectionFacts facts(const std::string& scope) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dltune::report
