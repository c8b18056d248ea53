#pragma once
// `dltune report`: a recording written as its HTML page or its JSON document, every input checked
// before anything is written.
#include <cstddef>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace dltune::report {

struct ReportRequest {
  std::string recording;  // the SQLite recording to read
  std::string output;     // the file to write ("-": standard output)
  bool html = true;       // else the JSON document
  std::string from, to;   // the window (window_of's forms); empty: the whole recording
  // Points per series at most: by default 4,000 for the page and every point for JSON.
  std::optional<std::size_t> max_points;
  bool force = false;  // the output may replace a file
};

// Reads the recording, takes its window, thins the series and writes the output atomically. An
// output that is the recording itself is refused, --force or not; so is an empty recording
// (bad input: a recording, window or output refused; else the recording could not be read).
[[nodiscard]] tl::expected<void, Failure> make_report(const ReportRequest& request);

}  // namespace dltune::report
