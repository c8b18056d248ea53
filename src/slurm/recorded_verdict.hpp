#pragma once
// The bottleneck verdict of a recording kept of a Slurm job, for its efficiency report: jobstats
// gives the numbers, the recording says why (`dltune profile RECORDING`'s verdict and action).
// A recording is of job J when `dltune record --slurm-job J` made it (its document "slurm") or
// `dltune run --record` inside the job did (its document "summary", whose "slurm" names it).
#include <string>

#include "core/error.hpp"
#include "core/json_fwd.hpp"

namespace dltune::slurm {

struct RecordedVerdict {
  std::string path;
  std::string rule;        // the rule that matched: "compute-bound-cpu"
  std::string verdict;     // "input-bound", "compute-bound-cpu", "inconclusive"...
  std::string title;       // the rule's title
  std::string summary;     // the one line, with the window's numbers
  std::string confidence;  // "high", "medium", "low"
  std::string action;      // the one thing to try first
  bool healthy = false;    // the model sets the pace
  std::size_t samples = 0;
};

// Errors (bad input, each naming the file): it is no recording, it names no Slurm job or
// another one than `job_id`, or it has too few samples to judge.
[[nodiscard]] Result<RecordedVerdict> recorded_verdict(const std::string& path,
                                                       const std::string& job_id);

[[nodiscard]] inventory::Json to_json(const RecordedVerdict& v);
// "Bottleneck (recording FILE): ..." and its action, for the efficiency text.
[[nodiscard]] std::string render_text(const RecordedVerdict& v);

}  // namespace dltune::slurm
