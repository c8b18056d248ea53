#pragma once
// What `dltune slurm efficiency JOB` prints: the job measured on this node (efficiency.hpp);
// when it has ended here, the Epilog's report of it (epilog.hpp); with a recording kept of the
// job, that recording's verdict joined (recorded_verdict.hpp).
#include <string>

#include "host/root.hpp"
#include "slurm/efficiency.hpp"

namespace dltune::slurm {

struct EfficiencyReportRequest {
  EfficiencyRequest measure;
  std::string report_dir = kJobReportDir;
  std::string recording;  // a recording of the job, or empty
  bool json = false;
};

// The text or the JSON document (ending in a newline). The recording is read first, so that a
// wrong file is said before the job is measured. A failure is bad input for a job id that is no
// job's here and that has no report either (the error says where it looked).
[[nodiscard]] tl::expected<std::string, Failure> efficiency_report(
    const host::Root& root, const EfficiencyReportRequest& request);

}  // namespace dltune::slurm
