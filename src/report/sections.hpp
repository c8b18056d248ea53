#pragma once
// Which charts a report has, and why a section has none (internal to report/).
#include <string>
#include <vector>

#include "report/series.hpp"

namespace dltune::report {

// What extract() saw in the window.
struct SectionFacts {
  std::string scope;  // the recording's: "host", "tree of python", "cgroup /x", "all"
  bool saw_gpu = false, saw_job = false, saw_cgroup = false, saw_pressure = false;
  std::vector<std::string> disks, nets;
  std::vector<unsigned> gpus;
};

// The sections in page order, each chart naming only series that `data` has.
[[nodiscard]] std::vector<Section> make_sections(const ReportData& data, const SectionFacts& facts);

}  // namespace dltune::report
